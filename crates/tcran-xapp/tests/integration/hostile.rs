//! What a hostile or broken peer cannot do to the SDK's server: open more
//! than `max_connections` associations, or register one GlobalE2node-ID
//! as many nodes.

use crate::support::*;
use tcran_e2::e2ap::{self, E2apPdu};
use tcran_e2::transport::{self, Framed};
use tcran_xapp::server::DuplicatePolicy;
use tcran_xapp::{CloseCause, NodeEvent};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Whether the server closed `s`: it reads end of stream (or a reset).
async fn closed(s: &mut tokio::net::TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(
        tokio::time::timeout(WAIT, s.read(&mut b)).await,
        Ok(Ok(0) | Err(_))
    )
}

fn setup_frame(gnb: u32) -> Vec<u8> {
    let f = e2ap::RanFunction {
        id: 300,
        definition: vec![0],
        revision: 1,
        oid: "1.3.6.1.4.1.1".into(),
    };
    transport::frame(&tcran_xapp::fuzzing::setup_request_of(gnb, vec![f])).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_are_closed_and_counted() {
    const CAP: usize = 4;
    const EXTRA: usize = 3;
    let (x, addr) = start_xapp(|c| {
        c.max_connections = CAP;
        // Idle sockets must stay until the test is done with them.
        c.setup_timeout = std::time::Duration::from_secs(600);
    })
    .await;
    // The accept queue is first in, first out: the first CAP are the
    // ones accepted.
    let mut held = Vec::new();
    for _ in 0..CAP {
        held.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    for _ in 0..EXTRA {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        assert!(
            closed(&mut s).await,
            "a connection beyond the cap stays open"
        );
    }
    assert_eq!(x.connections_refused(), EXTRA as u64);
    // The held ones are open: nothing to read, no end of stream.
    for s in &held {
        let mut b = [0u8; 1];
        assert!(matches!(s.try_read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock));
    }
    // One closes: its slot is free again, and a node gets in (its
    // backoff retries until the server has seen the close).
    drop(held.pop());
    let n = spawn_node(addr, 9, fake(1), None);
    let nodes = x.wait_for_nodes(1, WAIT * 3).await.unwrap();
    assert_eq!(nodes[0].name, "gnb:00f110:9");
    n.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_per_global_id_the_newest_replaces_the_others() {
    let (x, addr) = start_xapp(|_| {}).await;
    let mut events = x.events();
    let mut socks = Vec::new();
    let mut last = None;
    for _ in 0..20 {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(&setup_frame(5)).await.unwrap();
        let NodeEvent::Connected(n) =
            event(&mut events, |e| matches!(e, NodeEvent::Connected(_))).await
        else {
            unreachable!()
        };
        if let Some(old) = last.replace(n.id) {
            let e = event(
                &mut events,
                |e| matches!(e, NodeEvent::Disconnected { id, .. } if *id == old),
            )
            .await;
            assert!(
                matches!(e, NodeEvent::Disconnected { cause: CloseCause::Replaced { by }, .. } if by == n.id),
                "{e:?}"
            );
        }
        // One node at any time, the newest association.
        let nodes = x.nodes();
        assert_eq!(nodes.len(), 1, "{nodes:?}");
        assert_eq!(nodes[0].id, n.id);
        socks.push(s);
    }
    // The replaced associations were closed.
    let newest = socks.pop().unwrap();
    for mut s in socks {
        let mut b = vec![0u8; 4096];
        // The E2 Setup Response, then the end.
        loop {
            match tokio::time::timeout(WAIT, s.read(&mut b)).await.unwrap() {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
    drop(newest);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_refuse_a_second_association_gets_e2_setup_failure() {
    let (x, addr) = start_xapp(|c| c.duplicate = DuplicatePolicy::Refuse).await;
    let mut events = x.events();
    let mut first = tokio::net::TcpStream::connect(addr).await.unwrap();
    first.write_all(&setup_frame(5)).await.unwrap();
    let NodeEvent::Connected(n) =
        event(&mut events, |e| matches!(e, NodeEvent::Connected(_))).await
    else {
        unreachable!()
    };
    let second = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut second = Framed::new(second);
    second.queue(&setup_frame(5)[4..]).unwrap();
    second.flush().await.unwrap();
    let pdu = tokio::time::timeout(WAIT, second.recv())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    match e2ap::decode(&pdu).unwrap() {
        // TimeToWait v10s (E2AP 9.2.24 index 3).
        E2apPdu::E2SetupFailure(f) => assert_eq!(f.time_to_wait, Some(3)),
        other => panic!("{other:?}"),
    }
    assert!(tokio::time::timeout(WAIT, second.recv())
        .await
        .unwrap()
        .is_none());
    let e = event(&mut events, |e| matches!(e, NodeEvent::Disconnected { .. })).await;
    assert!(
        matches!(
            &e,
            NodeEvent::Disconnected {
                cause: CloseCause::SetupRefused(_),
                ..
            }
        ),
        "{e:?}"
    );
    let nodes = x.nodes();
    assert_eq!(nodes.len(), 1);
    assert_eq!(nodes[0].id, n.id);
    drop(first);
}
