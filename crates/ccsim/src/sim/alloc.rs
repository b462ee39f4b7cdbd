//! The global allocator of ccsim's binaries: the system allocator, except that blocks of 2 MiB
//! and more (the port, packet, flow and route arrays of a large fabric) are aligned to 2 MiB
//! and, on Linux, asked to be backed by transparent huge pages. At 8,192 hosts a packet's
//! random accesses otherwise miss the TLB as well as the cache. Results do not depend on it.

use std::alloc::{GlobalAlloc, Layout, System};

/// One huge page: blocks this large or larger are aligned to it and rounded up to it.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// `#[global_allocator] static A: HugePageAlloc = HugePageAlloc;` in a binary or cdylib.
pub struct HugePageAlloc;

impl HugePageAlloc {
    /// The layout a large block is really allocated with: whole huge pages, aligned to one.
    fn huge(l: Layout) -> Option<Layout> {
        if l.size() < HUGE_PAGE_BYTES {
            return None;
        }
        let size = l.size().checked_next_multiple_of(HUGE_PAGE_BYTES)?;
        Layout::from_size_align(size, l.align().max(HUGE_PAGE_BYTES)).ok()
    }
}

// SAFETY: every block comes from `System` and goes back to it; a large block is allocated with
// a larger size and alignment than asked for, which `System::dealloc` (free) does not need
// to be told of. `madvise` only changes how the block's pages are backed, never its contents.
unsafe impl GlobalAlloc for HugePageAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let Some(h) = Self::huge(l) else {
            return unsafe { System.alloc(l) };
        };
        let p = unsafe { System.alloc(h) };
        #[cfg(target_os = "linux")]
        if !p.is_null() {
            // A hint: where the kernel has no huge pages, the block keeps small ones.
            unsafe { libc::madvise(p.cast(), h.size(), libc::MADV_HUGEPAGE) };
        }
        p
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        match Self::huge(l) {
            // Fresh large blocks are new mappings, zeroed by the kernel, but `System` only
            // knows that for its own layouts: zero explicitly.
            Some(_) => {
                let p = unsafe { self.alloc(l) };
                if !p.is_null() {
                    unsafe { std::ptr::write_bytes(p, 0, l.size()) };
                }
                p
            }
            None => unsafe { System.alloc_zeroed(l) },
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, Self::huge(l).unwrap_or(l)) }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if l.size() < HUGE_PAGE_BYTES && new_size < HUGE_PAGE_BYTES {
            return unsafe { System.realloc(p, l, new_size) };
        }
        // Crossing into or among large blocks: move, so the new block is aligned too.
        let Ok(new) = Layout::from_size_align(new_size, l.align()) else {
            return std::ptr::null_mut();
        };
        let q = unsafe { self.alloc(new) };
        if !q.is_null() {
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                self.dealloc(p, l);
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_contents_across_the_huge_page_threshold() {
        let a = HugePageAlloc;
        let small = Layout::from_size_align(4096, 8).unwrap();
        unsafe {
            let p = a.alloc(small);
            for i in 0..4096 {
                *p.add(i) = i as u8;
            }
            // Small -> large -> larger -> small: contents preserved, large blocks aligned.
            let mut l = small;
            let mut p = p;
            for size in [HUGE_PAGE_BYTES + 1, 3 * HUGE_PAGE_BYTES, 1000] {
                p = a.realloc(p, l, size);
                assert!(!p.is_null());
                if size >= HUGE_PAGE_BYTES {
                    assert_eq!(p as usize % HUGE_PAGE_BYTES, 0, "{size} bytes not aligned");
                }
                l = Layout::from_size_align(size, 8).unwrap();
                for i in 0..1000 {
                    assert_eq!(*p.add(i), i as u8, "byte {i} after growing to {size}");
                }
            }
            a.dealloc(p, l);
            let big = Layout::from_size_align(HUGE_PAGE_BYTES * 2, 64).unwrap();
            let z = a.alloc_zeroed(big);
            assert!((0..big.size()).step_by(4093).all(|i| *z.add(i) == 0));
            a.dealloc(z, big);
        }
    }
}
