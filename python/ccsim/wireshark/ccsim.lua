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

-- Each field of the ccsim header: (field, offset, bytes).
local layout = {
    { f.version, 4, 1 }, { f.kind, 5, 1 }, { f.mark, 6, 1 }, { f.prio, 7, 1 },
    { f.code, 8, 1 }, { f.wire, 10, 2 }, { f.payload, 12, 2 }, { f.flow, 16, 4 },
    { f.seq, 20, 8 }, { f.ts, 28, 8 }, { f.a, 36, 4 }, { f.b, 40, 4 }, { f.aux, 44, 4 },
}

function ccsim.dissector(tvb, pinfo, tree)
    for _, off in ipairs({ 54, 58 }) do
        if tvb:len() >= off + 48 and tvb(off, 4):string() == "CCSM" then
            local t = tree:add(ccsim, tvb(off, 48))
            for _, field in ipairs(layout) do
                t:add(field[1], tvb(off + field[2], field[3]))
            end
            -- The Info column names what ccsim sent (the frame holds its headers only).
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
