-- ccsim.lua: shows the ccsim header of ccsim's packet traces (output.trace) in Wireshark.
--   tshark -X lua_script:$(ccsim dissector) -r trace.pcapng -Y ccsim -V
--   wireshark: copy it to the personal Lua plugins folder (Help > About > Folders).
-- The header (48 bytes, big-endian) starts the payload after Ethernet, IPv4, UDP and the
-- InfiniBand BTH (and the AETH of an ACK or NACK); its layout is in ccsim's
-- crates/ccsim/src/metrics/trace.rs.

local ccsim = Proto("ccsim", "ccsim simulator header")
local kinds = { [0] = "data", [1] = "ACK", [2] = "NACK", [3] = "control" }
local marks = { [0] = "none", [1] = "UE", [2] = "CE" }

local f = ccsim.fields
f.version = ProtoField.uint8("ccsim.version", "Version")
f.kind = ProtoField.uint8("ccsim.kind", "Kind", base.DEC, kinds)
f.mark = ProtoField.uint8("ccsim.mark", "Congestion mark", base.DEC, marks)
f.prio = ProtoField.uint8("ccsim.prio", "Priority")
f.code = ProtoField.uint8("ccsim.code", "Control code (the scheme's)")
f.wire = ProtoField.uint16("ccsim.wire_bytes", "Bytes on the wire")
f.payload = ProtoField.uint16("ccsim.payload_bytes", "Payload bytes")
f.flow = ProtoField.uint32("ccsim.flow", "Flow")
f.seq = ProtoField.uint64("ccsim.seq", "Sequence (first payload byte; an ACK's cumulative)")
f.ts = ProtoField.uint64("ccsim.ts_ps", "Timestamp (ps; an ACK's echo)")
f.a = ProtoField.uint32("ccsim.hdr_a", "Scheme header field a")
f.b = ProtoField.uint32("ccsim.hdr_b", "Scheme header field b")
f.aux = ProtoField.uint32("ccsim.aux", "Aux (path key, SACK index)", base.HEX)

function ccsim.dissector(tvb, pinfo, tree)
    for _, off in ipairs({ 54, 58 }) do
        if tvb:len() >= off + 48 and tvb(off, 4):string() == "CCSM" then
            local t = tree:add(ccsim, tvb(off, 48))
            t:add(f.version, tvb(off + 4, 1))
            t:add(f.kind, tvb(off + 5, 1))
            t:add(f.mark, tvb(off + 6, 1))
            t:add(f.prio, tvb(off + 7, 1))
            t:add(f.code, tvb(off + 8, 1))
            t:add(f.wire, tvb(off + 10, 2))
            t:add(f.payload, tvb(off + 12, 2))
            t:add(f.flow, tvb(off + 16, 4))
            t:add(f.seq, tvb(off + 20, 8))
            t:add(f.ts, tvb(off + 28, 8))
            t:add(f.a, tvb(off + 36, 4))
            t:add(f.b, tvb(off + 40, 4))
            t:add(f.aux, tvb(off + 44, 4))
            -- The Info column names what ccsim sent (a capture cut after the headers makes
            -- Wireshark's InfiniBand dissector call the payload short).
            local kind = kinds[tvb(off + 5, 1):uint()] or "?"
            local mark = marks[tvb(off + 6, 1):uint()]
            local info = string.format("ccsim %s flow %d seq %s, %d B", kind,
                tvb(off + 16, 4):uint(), tostring(tvb(off + 20, 8):uint64()),
                tvb(off + 10, 2):uint())
            if mark ~= "none" then
                info = info .. ", " .. mark .. ((kind == "ACK" or kind == "NACK") and " echo" or "")
            end
            pinfo.cols.info:clear_fence()
            pinfo.cols.info:set(info)
            return
        end
    end
end

register_postdissector(ccsim)
