//! A queue of packet ids whose all-zero bytes are a valid empty queue, so that a `Port` is too
//! (`bytemuck::Zeroable`): a partition of a parallel run keeps the ports it does not own as
//! zeroed memory that is never touched, and so never resident (`engine::parallel`). A ring of
//! power-of-two capacity, grown by doubling, in one heap block like `VecDeque`.

use std::ptr::NonNull;

pub struct Fifo {
    /// The ring's first slot (None: no block yet, `cap` 0).
    buf: Option<NonNull<u32>>,
    cap: u32,
    /// The slot of the first entry.
    head: u32,
    len: u32,
}

// SAFETY: a `Fifo` owns its block alone, as a `Box<[u32]>` would.
unsafe impl Send for Fifo {}
// SAFETY: `&Fifo` only reads.
unsafe impl Sync for Fifo {}
// SAFETY: all zeros is `buf` None (a null `NonNull<u32>` in an Option, which Rust guarantees
// for a sized pointee) with capacity and length 0: the empty queue `Fifo::default()` is.
unsafe impl bytemuck::Zeroable for Fifo {}

impl Default for Fifo {
    fn default() -> Self {
        bytemuck::Zeroable::zeroed()
    }
}

impl Fifo {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ring's slots.
    fn slots(&self) -> &[u32] {
        match self.buf {
            // SAFETY: `buf` is a block of `cap` slots (`grow`), all initialized.
            Some(p) => unsafe { std::slice::from_raw_parts(p.as_ptr(), self.cap as usize) },
            None => &[],
        }
    }

    fn slots_mut(&mut self) -> &mut [u32] {
        match self.buf {
            // SAFETY: as in `slots`, and `&mut self` makes the access unique.
            Some(p) => unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), self.cap as usize) },
            None => &mut [],
        }
    }

    /// The slot of entry `i` (`cap` > 0).
    #[inline]
    fn slot(&self, i: u32) -> usize {
        (self.head.wrapping_add(i) & (self.cap - 1)) as usize
    }

    #[inline]
    pub fn front(&self) -> Option<&u32> {
        (self.len > 0).then(|| &self.slots()[self.head as usize])
    }

    #[inline]
    pub fn push_back(&mut self, x: u32) {
        if self.len == self.cap {
            self.grow();
        }
        let i = self.slot(self.len);
        self.slots_mut()[i] = x;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let x = self.slots()[self.head as usize];
        self.head = (self.head + 1) & (self.cap - 1);
        self.len -= 1;
        Some(x)
    }

    pub fn pop_back(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.slots()[self.slot(self.len)])
    }

    /// The entries, first to last.
    pub fn iter(&self) -> impl Iterator<Item = &u32> + '_ {
        (0..self.len).map(move |i| &self.slots()[self.slot(i)])
    }

    /// Double the capacity (at least 4 slots), the entries moved to the start of a new block.
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (self.cap * 2).max(4);
        let mut v = Vec::with_capacity(cap as usize);
        v.extend(self.iter().copied());
        v.resize(cap as usize, 0);
        self.free();
        let block = Box::into_raw(v.into_boxed_slice());
        self.buf = NonNull::new(block.cast::<u32>());
        self.cap = cap;
        self.head = 0;
    }

    /// Give the block back (the queue keeps its length: callers reset or replace it).
    fn free(&mut self) {
        if let Some(p) = self.buf.take() {
            let block = std::ptr::slice_from_raw_parts_mut(p.as_ptr(), self.cap as usize);
            // SAFETY: `block` came from `Box::into_raw` of a boxed slice of `cap` slots (`grow`).
            drop(unsafe { Box::from_raw(block) });
        }
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        self.free();
    }
}

impl Clone for Fifo {
    fn clone(&self) -> Self {
        let mut c = Fifo::default();
        for &x in self.iter() {
            c.push_back(x);
        }
        c
    }
}

impl std::fmt::Debug for Fifo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Against `VecDeque` through growth and wrap-around, from a zeroed queue.
    #[test]
    fn matches_a_vecdeque() {
        let mut q: Fifo = bytemuck::Zeroable::zeroed();
        let mut r = VecDeque::new();
        let mut x = 0u32;
        // Pushes outnumber pops 2 to 1 in phases of growing length, then the queue drains.
        for step in 0..2000u32 {
            let push = step % 3 != 2 || step > 1500 && step % 7 == 0;
            if push && step <= 1500 {
                q.push_back(x);
                r.push_back(x);
                x += 1;
            } else if step % 11 == 0 {
                assert_eq!(q.pop_back(), r.pop_back());
            } else {
                assert_eq!(q.pop_front(), r.pop_front());
            }
            assert_eq!(q.len(), r.len());
            assert_eq!(q.front(), r.front());
            if step % 97 == 0 {
                assert!(q.iter().eq(r.iter()));
                let c = q.clone();
                assert!(c.iter().eq(r.iter()));
            }
        }
        while let Some(y) = r.pop_front() {
            assert_eq!(q.pop_front(), Some(y));
        }
        assert!(q.is_empty() && q.pop_front().is_none() && q.pop_back().is_none());
        assert_eq!(format!("{:?}", Fifo::default()), "[]");
    }
}
