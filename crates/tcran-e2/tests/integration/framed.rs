//! `transport::Framed`, the framed stream a driver reads and writes
//! itself, over in-memory pipes (`tokio::io::duplex`): frames cut at any
//! byte come out whole and in order, a `select!` that drops `recv` loses
//! nothing, bad lengths and a stream cut inside a frame end in one error,
//! and more than the 1 MiB output bound goes through a slow reader.

use std::time::Duration;
use tcran_e2::transport::{append_frame, Framed, TransportError, MAX_FRAME};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// PDUs of lengths 1, 2, 3 ... with distinct contents.
fn pdus(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| (0..=i).map(|j| (i * 31 + j) as u8).collect())
        .collect()
}

/// The byte stream of `pdus` with a zero-length frame (ignored) after
/// every third.
fn wire(pdus: &[Vec<u8>]) -> Vec<u8> {
    let mut w = Vec::new();
    for (i, p) in pdus.iter().enumerate() {
        append_frame(&mut w, p).unwrap();
        if i % 3 == 0 {
            w.extend_from_slice(&[0, 0, 0, 0]);
        }
    }
    w
}

#[tokio::test]
async fn frames_cut_anywhere_come_out_whole_and_in_order() {
    let sent = pdus(60);
    let bytes = wire(&sent);
    let (mut w, r) = tokio::io::duplex(64);
    let writer = tokio::spawn(async move {
        // Chunks of 1, 2, ..., 13 bytes: every cut position of a length
        // field and of a body occurs.
        let mut at = 0;
        let mut k = 1;
        while at < bytes.len() {
            let end = (at + k).min(bytes.len());
            w.write_all(&bytes[at..end]).await.unwrap();
            w.flush().await.unwrap();
            tokio::task::yield_now().await;
            at = end;
            k = k % 13 + 1;
        }
    });
    let mut f = Framed::new(r);
    let mut got = Vec::new();
    while let Some(p) = f.recv().await {
        got.push(p.unwrap());
    }
    writer.await.unwrap();
    assert_eq!(got, sent);
}

#[tokio::test]
async fn recv_dropped_by_select_loses_nothing() {
    let sent = pdus(40);
    let bytes = wire(&sent);
    let (mut w, r) = tokio::io::duplex(16);
    let writer = tokio::spawn(async move {
        for c in bytes.chunks(7) {
            w.write_all(c).await.unwrap();
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    });
    let mut f = Framed::new(r);
    let mut got = Vec::new();
    let mut cancelled = 0;
    loop {
        tokio::select! {
            p = f.recv() => match p {
                Some(p) => got.push(p.unwrap()),
                None => break,
            },
            // Fires often, mid-frame: the pending recv is dropped.
            _ = tokio::time::sleep(Duration::from_micros(500)) => cancelled += 1,
        }
    }
    writer.await.unwrap();
    assert!(
        cancelled > 0,
        "the timer never won: the test did not cancel"
    );
    assert_eq!(got, sent);
}

#[tokio::test]
async fn a_length_above_the_maximum_is_one_error() {
    let (mut w, r) = tokio::io::duplex(1024);
    let mut bytes = Vec::new();
    append_frame(&mut bytes, b"ok").unwrap();
    bytes.extend_from_slice(&((MAX_FRAME + 1) as u32).to_be_bytes());
    bytes.extend_from_slice(&[7; 100]);
    w.write_all(&bytes).await.unwrap();
    let mut f = Framed::new(r);
    assert_eq!(f.recv().await.unwrap().unwrap(), b"ok");
    match f.recv().await {
        Some(Err(TransportError::FrameLength(n))) => assert_eq!(n, MAX_FRAME + 1),
        other => panic!("expected a frame length error, got {other:?}"),
    }
    assert!(f.recv().await.is_none(), "nothing after the error");
}

#[tokio::test]
async fn a_stream_cut_inside_a_frame_is_an_error_and_a_clean_end_is_none() {
    let (mut w, r) = tokio::io::duplex(1024);
    let mut bytes = Vec::new();
    append_frame(&mut bytes, b"whole").unwrap();
    append_frame(&mut bytes, b"cut short").unwrap();
    w.write_all(&bytes[..bytes.len() - 3]).await.unwrap();
    drop(w);
    let mut f = Framed::new(r);
    assert_eq!(f.recv().await.unwrap().unwrap(), b"whole");
    match f.recv().await {
        Some(Err(TransportError::Io(e))) => {
            assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof)
        }
        other => panic!("expected an early end of stream, got {other:?}"),
    }
    assert!(f.recv().await.is_none());

    let (w, r) = tokio::io::duplex(1024);
    drop(w);
    assert!(Framed::new(r).recv().await.is_none());
}

#[tokio::test]
async fn more_than_the_output_bound_reaches_a_slow_reader_in_order() {
    // 4.8 MB of 60 kB frames through a 4 kB pipe: `flush` waits while more
    // than 1 MiB is queued; `recv` on the writing side keeps writing.
    let big: Vec<Vec<u8>> = (0..80u8).map(|i| vec![i; 60_000]).collect();
    let (a, b) = tokio::io::duplex(4096);
    let expect = big.clone();
    let reader = tokio::spawn(async move {
        let mut f = Framed::new(b);
        let mut got = Vec::new();
        while let Some(p) = f.recv().await {
            got.push(p.unwrap());
            tokio::task::yield_now().await;
        }
        got
    });
    let mut f = Framed::new(a);
    for p in &big {
        f.queue(p).unwrap();
        f.flush().await.unwrap();
    }
    // The rest goes out on close.
    f.close(Duration::from_secs(10)).await;
    let got = tokio::time::timeout(Duration::from_secs(10), reader)
        .await
        .expect("everything arrives")
        .unwrap();
    assert_eq!(got.len(), expect.len());
    assert!(got == expect, "frames arrive whole and in order");
}

#[tokio::test]
async fn oversized_pdus_are_refused_when_queued() {
    let (a, mut b) = tokio::io::duplex(1024);
    let mut f = Framed::new(a);
    assert!(matches!(
        f.queue(&vec![0; MAX_FRAME + 1]),
        Err(TransportError::FrameLength(_))
    ));
    assert!(matches!(f.queue(&[]), Err(TransportError::FrameLength(0))));
    f.queue(b"x").unwrap();
    f.flush().await.unwrap();
    let mut got = [0u8; 5];
    b.read_exact(&mut got).await.unwrap();
    assert_eq!(got, [0, 0, 0, 1, b'x'], "only the valid PDU went out");
}

#[tokio::test]
async fn before_setup_the_buffer_grows_only_with_what_the_peer_sent() {
    let (mut w, r) = tokio::io::duplex(1 << 20);
    let mut f = Framed::before_setup(r);
    // A header that announces the largest frame, and a few bytes of it:
    // the peer has sent 14 bytes, the buffer stays at its first 4 KiB.
    w.write_all(&(MAX_FRAME as u32).to_be_bytes())
        .await
        .unwrap();
    w.write_all(&[7; 10]).await.unwrap();
    assert!(tokio::time::timeout(Duration::from_millis(50), f.recv())
        .await
        .is_err());
    assert_eq!(f.read_buffer_len(), 4096);
    // The rest of it: the buffer holds exactly one frame, no more.
    w.write_all(&vec![7; MAX_FRAME - 10]).await.unwrap();
    let got = f.recv().await.unwrap().unwrap();
    assert_eq!(got.len(), MAX_FRAME);
    assert_eq!(f.read_buffer_len(), MAX_FRAME + 4);
    // After E2 Setup frames may be read in batches of up to 128 KiB.
    f.after_setup();
    let mut batch = Vec::new();
    for _ in 0..3 {
        append_frame(&mut batch, &vec![1; MAX_FRAME - 100]).unwrap();
    }
    w.write_all(&batch).await.unwrap();
    for _ in 0..3 {
        assert_eq!(f.recv().await.unwrap().unwrap().len(), MAX_FRAME - 100);
    }
    assert!(f.read_buffer_len() <= 128 * 1024, "{}", f.read_buffer_len());
}
