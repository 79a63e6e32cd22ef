//! A round-robin list of backlogged queues with O(1) membership.

use crate::stage::{Blocked, QueueView};
use std::collections::VecDeque;
use tcran_core::QueueId;

#[derive(Debug, Default, Clone)]
pub struct ActiveList {
    order: VecDeque<QueueId>,
    member: Vec<bool>,
}

impl ActiveList {
    pub fn contains(&self, q: QueueId) -> bool {
        self.member.get(q.index()).copied().unwrap_or(false)
    }
    pub fn push_back(&mut self, q: QueueId) {
        if self.contains(q) {
            return;
        }
        if self.member.len() <= q.index() {
            self.member.resize(q.index() + 1, false);
        }
        self.member[q.index()] = true;
        self.order.push_back(q);
    }
    pub fn remove(&mut self, q: QueueId) {
        if !self.contains(q) {
            return;
        }
        self.member[q.index()] = false;
        // Mostly the queue just served, at the front: no search, no shift.
        if self.order.front() == Some(&q) {
            self.order.pop_front();
        } else if let Some(i) = self.order.iter().position(|x| *x == q) {
            self.order.remove(i);
        }
    }
    /// Moves `q` to the tail (it was served).
    pub fn rotate(&mut self, q: QueueId) {
        if self.order.front() == Some(&q) {
            self.order.rotate_left(1);
        } else if let Some(i) = self.order.iter().position(|x| *x == q) {
            self.order.remove(i);
            self.order.push_back(q);
        }
    }
    /// First member, in order, that holds packets and is not blocked; empty
    /// members met on the way are dropped from the list.
    pub fn first_ready(&mut self, view: &dyn QueueView, blocked: &Blocked) -> Option<QueueId> {
        while let Some(&q) = self.order.front() {
            if view.packets(q) == 0 {
                self.order.pop_front();
                self.member[q.index()] = false;
            } else {
                break;
            }
        }
        // The front now holds packets: it is the answer unless a shaper
        // holds it back (asked once, not again by the search).
        let &front = self.order.front()?;
        if !blocked.contains(front) {
            return Some(front);
        }
        self.order
            .iter()
            .skip(1)
            .copied()
            .find(|q| view.packets(*q) > 0 && !blocked.contains(*q))
    }
    pub fn iter(&self) -> impl Iterator<Item = QueueId> + '_ {
        self.order.iter().copied()
    }
}
