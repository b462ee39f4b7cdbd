//! The global allocator of ccsim's binaries: the system allocator, except that on Linux blocks
//! of 2 MiB and more (the port, packet, flow and route arrays of a large fabric) are mappings
//! of their own, aligned to 2 MiB and advised onto transparent huge pages (at 8,192 hosts a
//! packet's random accesses otherwise miss the TLB as well as the cache), and blocks of
//! 256 KiB and more are mappings of their own on small pages, which go back to the system as
//! they are freed. Results do not depend on it.

/// One huge page: blocks this large or larger get whole huge pages of their own.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;
/// Blocks this large or larger (and smaller than a huge page) are mappings of their own on
/// small pages. The system allocator serves them from its arenas once a block of that size
/// has been freed (glibc raises its mmap threshold to the freed size), and a thread's arena
/// keeps what its growing buffers left behind: 16 partitions of k = 32 with HPCC peaked 7%
/// higher so (`MALLOC_MMAP_THRESHOLD_`, which would reach the whole process, gave the same).
pub const MAPPED_MIN_BYTES: usize = 256 << 10;

/// `#[global_allocator] static A: HugePageAlloc = HugePageAlloc;` in a binary or cdylib.
#[cfg(target_os = "linux")]
pub use linux::HugePageAlloc;
/// Off Linux, the system allocator.
#[cfg(not(target_os = "linux"))]
pub use std::alloc::System as HugePageAlloc;

/// Back `block` with small pages from here on (Linux; elsewhere nothing): for a large array of
/// which a thread touches scattered parts, so that the untouched parts stay unmapped rather
/// than resident in the huge pages around the touched ones. Call it before touching `block`.
pub fn small_pages<T>(block: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (block.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (block.as_ptr() as usize + std::mem::size_of_val(block)) / PAGE * PAGE;
        if end > start {
            // SAFETY: advice on whole pages inside `block`, which it owns; it changes how they
            // are backed, never their contents.
            unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    end - start,
                    libc::MADV_NOHUGEPAGE,
                )
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = block;
}

/// Make `block` all zero bytes, forgetting its values (they are not dropped: they should own
/// nothing), and give its whole pages back to the OS (Linux), which maps zeros in again if they
/// are touched: for a large array whose entries have moved elsewhere, so that its memory goes
/// as they leave rather than when the array is dropped.
pub fn zero_and_release<T: bytemuck::Zeroable>(block: &mut [T]) {
    let bytes = std::mem::size_of_val(block);
    let base = block.as_mut_ptr().cast::<u8>();
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let (at, end) = (base as usize, base as usize + bytes);
        let (first, last) = (at.next_multiple_of(PAGE), end / PAGE * PAGE);
        if last > first {
            // SAFETY: `block` is borrowed mutably and all-zero bytes are a `T` (`Zeroable`).
            // The edges are zeroed by hand; the pages between are private anonymous memory
            // (a Vec's), which MADV_DONTNEED drops and maps back in as zeros.
            unsafe {
                std::ptr::write_bytes(base, 0, first - at);
                std::ptr::write_bytes(last as *mut u8, 0, end - last);
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_DONTNEED,
                );
            }
            return;
        }
    }
    // SAFETY: as above, without pages to give back.
    unsafe { std::ptr::write_bytes(base, 0, bytes) };
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{HUGE_PAGE_BYTES, MAPPED_MIN_BYTES};
    use std::alloc::{GlobalAlloc, Layout, System};

    pub struct HugePageAlloc;

    /// A small page.
    const PAGE_BYTES: usize = 4096;

    /// The mapped length of a block of layout `l` when it gets huge pages of its own.
    fn huge_len(l: Layout) -> Option<usize> {
        (l.size() >= HUGE_PAGE_BYTES && l.align() <= HUGE_PAGE_BYTES)
            .then(|| l.size().checked_next_multiple_of(HUGE_PAGE_BYTES))
            .flatten()
    }

    /// The mapped length of a block of layout `l` when it gets small pages of its own.
    fn small_len(l: Layout) -> Option<usize> {
        ((MAPPED_MIN_BYTES..HUGE_PAGE_BYTES).contains(&l.size()) && l.align() <= PAGE_BYTES)
            .then(|| l.size().next_multiple_of(PAGE_BYTES))
    }

    /// A fresh zeroed mapping of `len` bytes on small pages; null if the system has no memory
    /// for it.
    fn map_small(len: usize) -> *mut u8 {
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a new private anonymous mapping.
        let raw = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, -1, 0) };
        if raw == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        raw.cast()
    }

    /// A fresh zeroed mapping of `len` bytes (a multiple of 2 MiB) aligned to 2 MiB, for a
    /// block of `size` bytes (`advise`); null if the system has no memory for it.
    fn map(size: usize, len: usize) -> *mut u8 {
        let Some(over) = len.checked_add(HUGE_PAGE_BYTES) else {
            return std::ptr::null_mut();
        };
        // SAFETY: a new private anonymous mapping; the parts outside the aligned block are
        // unmapped again, and madvise only chooses how the block is backed.
        unsafe {
            let prot = libc::PROT_READ | libc::PROT_WRITE;
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
            let raw = libc::mmap(std::ptr::null_mut(), over, prot, flags, -1, 0);
            if raw == libc::MAP_FAILED {
                return std::ptr::null_mut();
            }
            let raw = raw.cast::<u8>();
            let head = raw.align_offset(HUGE_PAGE_BYTES);
            if head > 0 {
                libc::munmap(raw.cast(), head);
            }
            let p = raw.add(head);
            if head < HUGE_PAGE_BYTES {
                libc::munmap(p.add(len).cast(), HUGE_PAGE_BYTES - head);
            }
            advise(p, size, len);
            p
        }
    }

    /// Put the mapping of `len` bytes at `p` that holds a block of `size` bytes on huge pages,
    /// except a last huge page the block fills less than half: that one keeps small pages, so
    /// that the rest of it, never touched, is not resident (a 2.1 MB array would otherwise hold
    /// 4 MB). A hint: where the kernel has no huge pages, the block keeps small ones.
    fn advise(p: *mut u8, size: usize, len: usize) {
        let rest = size % HUGE_PAGE_BYTES;
        let huge = if rest > 0 && rest < HUGE_PAGE_BYTES / 2 {
            len - HUGE_PAGE_BYTES
        } else {
            len
        };
        // SAFETY: advice on whole pages of a mapping of `len` bytes at `p`; it changes how
        // they are backed, never their contents.
        unsafe {
            libc::madvise(p.cast(), huge, libc::MADV_HUGEPAGE);
            if huge < len {
                libc::madvise(p.add(huge).cast(), len - huge, libc::MADV_NOHUGEPAGE);
            }
        }
    }

    /// Unmap a block of `map`.
    unsafe fn unmap(p: *mut u8, len: usize) {
        unsafe { libc::munmap(p.cast(), len) };
    }

    /// Resize a block of `map` from a mapping of `old` bytes to one of `new` bytes holding
    /// `size`, moving its pages rather than copying its contents; null (the old block intact)
    /// if the system has no memory for it.
    unsafe fn remap(p: *mut u8, old: usize, new: usize, size: usize) -> *mut u8 {
        if new < old {
            unsafe { unmap(p.add(new), old - new) };
        }
        if new <= old {
            advise(p, size, new);
            return p;
        }
        let q = map(size, new);
        if q.is_null() {
            return q;
        }
        // SAFETY: moves the old pages over the start of the new block (replacing its fresh
        // ones); the old range is left unmapped.
        let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
        let moved = unsafe { libc::mremap(p.cast(), old, old, flags, q) };
        if moved == libc::MAP_FAILED {
            unsafe { unmap(q, new) };
            return std::ptr::null_mut();
        }
        // The old pages brought their own advice along.
        advise(q, size, new);
        q
    }

    // SAFETY: small blocks come from `System` and go back to it; larger ones are mappings of
    // their own (zeroed when fresh), sized by the same rules when they are freed or resized.
    unsafe impl GlobalAlloc for HugePageAlloc {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            match (huge_len(l), small_len(l)) {
                (Some(len), _) => map(l.size(), len),
                (_, Some(len)) => map_small(len),
                _ => unsafe { System.alloc(l) },
            }
        }

        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            match (huge_len(l), small_len(l)) {
                (Some(len), _) => map(l.size(), len),
                (_, Some(len)) => map_small(len),
                _ => unsafe { System.alloc_zeroed(l) },
            }
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            match huge_len(l).or(small_len(l)) {
                Some(len) => unsafe { unmap(p, len) },
                None => unsafe { System.dealloc(p, l) },
            }
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
            let Ok(new) = Layout::from_size_align(new_size, l.align()) else {
                return std::ptr::null_mut();
            };
            match (huge_len(l), huge_len(new)) {
                (None, None) => match (small_len(l), small_len(new)) {
                    (None, None) => unsafe { System.realloc(p, l, new_size) },
                    // SAFETY: moves the mapping's pages, or resizes it in place.
                    (Some(old_len), Some(new_len)) => unsafe {
                        let flags = libc::MREMAP_MAYMOVE;
                        let q = libc::mremap(p.cast(), old_len, new_len, flags);
                        if q == libc::MAP_FAILED {
                            std::ptr::null_mut()
                        } else {
                            q.cast()
                        }
                    },
                    _ => unsafe { self.copy_to_new(p, l, new) },
                },
                (Some(old_len), Some(new_len)) => unsafe { remap(p, old_len, new_len, new_size) },
                _ => unsafe { self.copy_to_new(p, l, new) },
            }
        }
    }

    impl HugePageAlloc {
        /// Resize across a threshold: copy block `p` of layout `l` into a new block of layout
        /// `new`, and free it; null (the old block intact) if there is no memory for the new one.
        unsafe fn copy_to_new(&self, p: *mut u8, l: Layout, new: Layout) -> *mut u8 {
            unsafe {
                let q = self.alloc(new);
                if !q.is_null() {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(new.size()));
                    self.dealloc(p, l);
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{GlobalAlloc, Layout};

    #[test]
    fn blocks_keep_their_contents_across_the_huge_page_threshold() {
        let a = HugePageAlloc;
        let mut l = Layout::from_size_align(4096, 8).unwrap();
        unsafe {
            let mut p = a.alloc(l);
            for i in 0..4096 {
                *p.add(i) = i as u8;
            }
            // Through every class and back: contents kept, mapped blocks aligned and whole.
            for size in [
                MAPPED_MIN_BYTES + 1,
                3 * MAPPED_MIN_BYTES,
                HUGE_PAGE_BYTES + 1,
                5 * HUGE_PAGE_BYTES,
                3 * HUGE_PAGE_BYTES,
                2 * MAPPED_MIN_BYTES,
                MAPPED_MIN_BYTES,
                1000,
            ] {
                p = a.realloc(p, l, size);
                assert!(!p.is_null());
                if cfg!(target_os = "linux") && size >= MAPPED_MIN_BYTES {
                    let align = if size >= HUGE_PAGE_BYTES {
                        HUGE_PAGE_BYTES
                    } else {
                        4096
                    };
                    assert_eq!(p as usize % align, 0, "{size} bytes not aligned");
                    *p.add(size - 1) = 7;
                }
                l = Layout::from_size_align(size, 8).unwrap();
                for i in 0..1000 {
                    assert_eq!(*p.add(i), i as u8, "byte {i} after resizing to {size}");
                }
            }
            a.dealloc(p, l);
            let big = Layout::from_size_align(HUGE_PAGE_BYTES * 2 + 5, 64).unwrap();
            let z = a.alloc_zeroed(big);
            assert!((0..big.size()).all(|i| *z.add(i) == 0));
            a.dealloc(z, big);
        }
    }

    /// A block that fills less than half of its last huge page keeps small pages there, and
    /// huge pages before it; one that fills more than half keeps huge pages to its end (Linux
    /// with transparent huge pages: the advice read back from the mapping's flags).
    #[test]
    #[cfg(target_os = "linux")]
    fn a_short_tail_keeps_small_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            return;
        }
        // The advice of the mapping holding address `at`: "hg", "nh" or neither.
        let flags = |at: usize| {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let mut inside = false;
            for line in smaps.lines() {
                if let Some((range, _)) = line.split_once(' ') {
                    if let Some((a, b)) = range.split_once('-') {
                        if let (Ok(a), Ok(b)) =
                            (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                        {
                            inside = a <= at && at < b;
                            continue;
                        }
                    }
                }
                if inside && line.starts_with("VmFlags:") {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    return ["hg", "nh"].into_iter().find(|f| words.contains(f));
                }
            }
            None
        };
        let a = HugePageAlloc;
        for (size, tail) in [
            (HUGE_PAGE_BYTES + HUGE_PAGE_BYTES / 4, Some("nh")),
            (HUGE_PAGE_BYTES + 3 * HUGE_PAGE_BYTES / 4, Some("hg")),
        ] {
            let l = Layout::from_size_align(size, 8).unwrap();
            unsafe {
                let p = a.alloc(l);
                assert!(!p.is_null());
                assert_eq!(
                    flags(p as usize),
                    Some("hg"),
                    "{size} bytes: first huge page"
                );
                let last = p as usize + HUGE_PAGE_BYTES;
                assert_eq!(flags(last), tail, "{size} bytes: last huge page");
                a.dealloc(p, l);
            }
        }
    }

    /// A freed block of 256 KiB or more is no longer mapped, the second time as the first (the
    /// system allocator keeps such a block in its arena once one of its size was freed). Run
    /// in a process of its own, where no other test's thread can map the freed range again.
    #[test]
    #[cfg(target_os = "linux")]
    fn freed_blocks_go_back_to_the_system() {
        const ALONE: &str = "CCSIM_ALLOC_TEST_ALONE";
        if std::env::var_os(ALONE).is_none() {
            let name = "sim::alloc::tests::freed_blocks_go_back_to_the_system";
            let exe = std::env::current_exe().unwrap();
            let out = std::process::Command::new(exe)
                .args([name, "--exact", "--test-threads=1"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && text.contains("1 passed"), "{text}");
            return;
        }
        let mapped = |at: usize| {
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            maps.lines().any(|line| {
                let range = line.split(' ').next().unwrap_or("");
                let (a, b) = range.split_once('-').unwrap_or(("0", "0"));
                let (a, b) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16));
                a.is_ok_and(|a| b.is_ok_and(|b| a <= at && at < b))
            })
        };
        let a = HugePageAlloc;
        let l = Layout::from_size_align(MAPPED_MIN_BYTES * 3, 8).unwrap();
        for round in 0..2 {
            unsafe {
                let p = a.alloc(l);
                assert!(!p.is_null());
                std::ptr::write_bytes(p, 1, l.size());
                let at = p as usize + l.size() / 2;
                assert!(mapped(at));
                a.dealloc(p, l);
                assert!(
                    !mapped(at),
                    "round {round}: the freed block is still mapped"
                );
            }
        }
    }

    /// The released part reads as zero (its whole pages handed back, its edges zeroed by hand)
    /// and nothing beside it changes, on an unaligned range of a block large enough for whole
    /// pages, and on one too small for any.
    #[test]
    fn zero_and_release_zeroes_exactly_the_block() {
        for range in [1234..250_001, 10..20] {
            let mut v: Vec<u64> = (1..=300_000).collect();
            zero_and_release(&mut v[range.clone()]);
            for (i, &x) in v.iter().enumerate() {
                let want = if range.contains(&i) { 0 } else { i as u64 + 1 };
                assert_eq!(x, want, "entry {i} after releasing {range:?}");
            }
        }
    }
}
