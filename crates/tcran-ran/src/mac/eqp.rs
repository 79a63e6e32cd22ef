//! Elastic Quantum Partition (thesis Irazabal, ch. 4, Alg. 8 and 9).
//!
//! Every slot each slice's quantum grows by its SLA share ⌊N·share⌋ PRBs
//! and shrinks by the PRBs it gets; it is kept within ±`eqp_quantum_limit`.
//! Then:
//!
//! 1. `generate_rbs`: each UE's queue (its logical channels in priority
//!    order, SDU by SDU from `LcInput::sdu_sizes`) becomes a chain of
//!    packets whose cost is the PRBs (rounded up to RBGs) needed to send the
//!    queue up to and including that packet. Packets of an indebted slice
//!    (quantum q < 0) are inflated by 1 + 5·f^5 with f = -q/limit (the
//!    thesis' "5 × fraction^5" discouragement; we read it as a growth factor
//!    so that f = 0 leaves sizes unchanged).
//! 2. `seg_avoid` (Alg. 9): choose a prefix of each queue (the precedence
//!    constraint) so that the number of whole packets sent is maximal within
//!    the PRBs, ties broken by the larger sum of slice quanta (slices that
//!    lent more go first). Alg. 9 is a memoised recursion over
//!    (queue, packet, capacity); the same optimum is computed here by the
//!    equivalent dynamic programme over (queue, capacity), O(Q·C·K).
//!    A choice that would push a slice below -limit is not allowed.
//! 3. Alg. 8 lines 10-18: leftover PRBs go one RBG at a time to the slice
//!    with the largest quantum that still has undrained UEs, while that
//!    slice's quantum is above -0.75·limit.
//! 4. Line 20: PRBs still left are charged to the slices with positive
//!    quantum (largest first) and stay idle: EQP keeps the SLA rather than
//!    handing a slice more than it is owed.

use super::{Mac, Rate, UeInput};

/// Most packets per queue considered (bounds the DP); the node gives the
/// scheduler at most this many SDU sizes per logical channel.
pub const MAX_PKTS: usize = 64;

/// (UE index, slice, (selection cost, real cost) of each prefix).
type Queue = (usize, usize, Vec<(u16, u16)>);

pub(crate) fn schedule(mac: &mut Mac, ues: &[UeInput<'_>], budget: u16) {
    let n = mac.n_prb();
    let slices: Vec<Option<usize>> = ues.iter().map(|u| mac.slice_index(u.rnti)).collect();
    let (p, quantum) = mac.eqp_parts();
    let limit = p.quantum_limit;
    let rbg = p.rbg;
    let shares: Vec<f64> = p.slices.iter().map(|(s, _)| *s).collect();
    for (q, s) in quantum.iter_mut().zip(&shares) {
        *q = (*q + (f64::from(n) * s).floor()).min(limit);
    }
    let quantum_now = quantum.clone();

    // 1. Cost chains: costs[q][k] = (selection cost, real cost) of k+1 packets.
    let round = |x: u16| -> Option<u16> {
        if x > budget {
            None
        } else {
            Some((x.div_ceil(rbg) * rbg).min(budget))
        }
    };
    let mut queues: Vec<Queue> = Vec::new();
    for (k, u) in ues.iter().enumerate() {
        let Some(s) = slices[k] else { continue };
        if mac.demand_of(k) == 0 || matches!(mac.rate_of(k), Rate::None) {
            continue;
        }
        let q = quantum_now[s];
        let f = if q < 0.0 { (-q / limit).min(1.0) } else { 0.0 };
        let inflate = 1.0 + 5.0 * f.powi(5);
        let mut lcs: Vec<usize> = (0..u.lcs.len()).collect();
        lcs.sort_by_key(|&i| u.lcs[i].priority);
        let mut cum = 0u64;
        let mut costs = Vec::new();
        'outer: for i in lcs {
            let l = &u.lcs[i];
            let one = [l.buffer_bytes.min(u64::from(u32::MAX)) as u32];
            let sizes: &[u32] = if l.sdu_sizes.is_empty() {
                if l.buffer_bytes == 0 {
                    &[]
                } else {
                    &one
                }
            } else {
                l.sdu_sizes
            };
            for &sz in sizes {
                if costs.len() >= MAX_PKTS {
                    break 'outer;
                }
                cum += u64::from(sz);
                let rate = mac.rate_of(k);
                let real = mac.prbs_for(rate, cum);
                let sel = mac.prbs_for(rate, (cum as f64 * inflate).ceil() as u64);
                // prbs_for returns N when even N PRBs are not enough.
                if u64::from(mac.bytes(rate, real)) < cum {
                    break 'outer;
                }
                match (round(sel), round(real)) {
                    (Some(a), Some(b)) if q - f64::from(b) >= -limit => costs.push((a, b)),
                    _ => break 'outer,
                }
            }
        }
        if !costs.is_empty() {
            queues.push((k, s, costs));
        }
    }

    // 2. seg_avoid as a grouped knapsack: best[c] = (packets, quantum sum).
    let cap = usize::from(budget);
    let mut best: Vec<(u32, f64)> = vec![(0, 0.0); cap + 1];
    let mut choice: Vec<Vec<u8>> = Vec::with_capacity(queues.len());
    for (_, s, costs) in &queues {
        let qv = quantum_now[*s];
        let mut next = best.clone();
        let mut ch = vec![0u8; cap + 1];
        for c in 0..=cap {
            for (j, &(sel, _)) in costs.iter().enumerate() {
                let sel = usize::from(sel);
                if sel > c {
                    break;
                }
                let (cnt, qs) = best[c - sel];
                let cand = (cnt + j as u32 + 1, qs + qv * (j as f64 + 1.0));
                if cand.0 > next[c].0 || (cand.0 == next[c].0 && cand.1 > next[c].1 + 1e-9) {
                    next[c] = cand;
                    ch[c] = j as u8 + 1;
                }
            }
        }
        best = next;
        choice.push(ch);
    }
    let mut c = cap;
    let mut left = budget;
    for (qi, (k, s, costs)) in queues.iter().enumerate().rev() {
        let j = choice[qi][c];
        if j > 0 {
            let (sel, real) = costs[usize::from(j) - 1];
            c -= usize::from(sel);
            mac.add_alloc(*k, real);
            left -= real;
            mac.quantum_mut()[*s] -= f64::from(real);
        }
    }

    // 3. Leftover RBGs to the slice with the largest quantum.
    while left > 0 {
        let mut pick: Option<(f64, usize)> = None;
        for (k, s) in slices.iter().enumerate() {
            let Some(s) = *s else { continue };
            if mac.alloc_of(k) >= mac.demand_of(k) || matches!(mac.rate_of(k), Rate::None) {
                continue;
            }
            let q = mac.quanta()[s];
            if q <= -0.75 * limit {
                continue;
            }
            // Largest quantum; within a slice the UE with the fewest PRBs.
            let better = match pick {
                None => true,
                Some((bq, bk)) => q > bq || (q == bq && mac.alloc_of(k) < mac.alloc_of(bk)),
            };
            if better {
                pick = Some((q, k));
            }
        }
        let Some((_, k)) = pick else { break };
        let take = rbg.min(left);
        mac.add_alloc(k, take);
        left -= take;
        let s = slices[k].expect("sliced");
        mac.quantum_mut()[s] -= f64::from(take);
    }

    // 4. Charge idle PRBs to slices with positive quantum.
    while left > 0 {
        let q = mac.quanta();
        let Some((s, &qv)) = q
            .iter()
            .enumerate()
            .filter(|(_, &v)| v > 0.0)
            .max_by(|a, b| a.1.total_cmp(b.1))
        else {
            break;
        };
        let take = (qv.ceil() as u16).clamp(1, left);
        mac.quantum_mut()[s] -= f64::from(take);
        left -= take;
    }
    for q in mac.quantum_mut().iter_mut() {
        *q = q.clamp(-limit, limit);
    }
}
