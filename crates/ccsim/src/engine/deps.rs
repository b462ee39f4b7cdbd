//! Flows that start when others have arrived (`FlowSpec::after`): per flow, how many flows it
//! still waits for and its delay, and who waits for whom. A flow counts as arrived when its
//! last byte reaches the receiver in order; the flows waiting for it alone then start `delay`
//! later. Empty, and never read on the data path, when no flow waits. In a parallel run the
//! partition where a flow arrives releases its waiters, so each waiter must send from the
//! host where the flows it waits for arrive (as every step of a collective does).

use super::Simulation;
use crate::sim::Event;
use crate::workload::FlowSpec;

#[derive(Clone, Debug, Default)]
pub struct Deps {
    /// Per flow: flows it still waits for.
    waiting: Vec<u32>,
    /// Per flow: from the last of them to its start.
    delay_ps: Vec<u64>,
    /// The flows waiting for flow f are `list[first[f]..first[f + 1]]`.
    first: Vec<u32>,
    list: Vec<u32>,
}

impl Deps {
    /// The dependencies of `specs` (the engine's flows, in order); empty if none waits.
    pub fn new(specs: &[FlowSpec]) -> Deps {
        if specs.iter().all(|s| s.after.is_empty()) {
            return Deps::default();
        }
        let mut first = vec![0u32; specs.len() + 1];
        for &a in specs.iter().flat_map(|s| &s.after) {
            first[a as usize + 1] += 1;
        }
        for f in 0..specs.len() {
            first[f + 1] += first[f];
        }
        let mut next = first.clone();
        let mut list = vec![0u32; first[specs.len()] as usize];
        for (f, s) in specs.iter().enumerate() {
            for &a in &s.after {
                list[next[a as usize] as usize] = f as u32;
                next[a as usize] += 1;
            }
        }
        Deps {
            waiting: specs.iter().map(|s| s.after.len() as u32).collect(),
            delay_ps: specs.iter().map(|s| s.after_delay_ps).collect(),
            first,
            list,
        }
    }

    /// No flow waits for another.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// A flow that waits for one arriving at another host than its sender, if any: (the one
    /// waited for, the waiting flow). A parallel run releases a flow in the partition where
    /// what it waits for arrives, which must be its sender's.
    pub fn remote(&self, flows: &[crate::transport::Flow]) -> Option<(u32, u32)> {
        (0..self.waiting.len()).find_map(|a| {
            let waiting = &self.list[self.first[a] as usize..self.first[a + 1] as usize];
            (waiting.iter())
                .find(|&&w| flows[w as usize].src != flows[a].dst)
                .map(|&w| (a as u32, w))
        })
    }

    /// Flow `f` starts only when the flows it waits for have arrived.
    pub fn waits(&self, f: usize) -> bool {
        self.waiting.get(f).is_some_and(|&w| w > 0)
    }
}

impl Simulation {
    /// Flow `fid`'s last byte reached its receiver: start the flows that waited for it last.
    pub(crate) fn flow_arrived(&mut self, fid: u32) {
        let d = &mut self.deps;
        for k in d.first[fid as usize]..d.first[fid as usize + 1] {
            let w = d.list[k as usize] as usize;
            d.waiting[w] -= 1;
            if d.waiting[w] == 0 {
                let f = &mut self.flows[w];
                f.start_ps = f.start_ps.max(self.now_ps + d.delay_ps[w]);
                self.q.push(f.start_ps, Event::FlowStart { flow: w as u32 });
            }
        }
    }
}
