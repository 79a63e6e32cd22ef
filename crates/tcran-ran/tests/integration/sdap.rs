use tcran_core::{DrbId, DropReason, FiveTuple, Instant, Packet, PacketId, Qfi};
use tcran_ran::sdap::{SdapConfig, SdapRule};

#[test]
fn qfis_map_many_to_one_default_and_no_route() {
    let c = SdapConfig {
        rules: vec![
            SdapRule { qfi: 1, drb: 1 },
            SdapRule { qfi: 5, drb: 1 },
            SdapRule { qfi: 9, drb: 2 },
        ],
        default_drb: None,
        dl_header_drbs: vec![2],
    };
    let s = c.build().unwrap();
    assert_eq!(s.map(Qfi(1)).unwrap().drb, DrbId(1));
    assert_eq!(s.map(Qfi(5)).unwrap().drb, DrbId(1));
    assert_eq!(s.map(Qfi(9)).unwrap().drb, DrbId(2));
    assert_eq!(s.map(Qfi(2)), Err(DropReason::NoRoute));
    assert_eq!(s.map(Qfi(63)), Err(DropReason::NoRoute));
    assert_eq!(
        s.qfis_of(DrbId(1)).collect::<Vec<_>>(),
        vec![Qfi(1), Qfi(5)]
    );
    let s = SdapConfig {
        default_drb: Some(3),
        ..c.clone()
    }
    .build()
    .unwrap();
    assert_eq!(s.map(Qfi(2)).unwrap().drb, DrbId(3));
    // The 1-byte DL header is added to the packet length on DRB 2 only.
    let mut p = Packet::new(PacketId(1), 100, FiveTuple::default(), Instant::ZERO);
    p.qfi = Qfi(9);
    assert_eq!(s.apply(&mut p).unwrap().header_bytes, 1);
    assert_eq!(p.len, 101);
    assert!(p.sdap_header);
    let mut p = Packet::new(PacketId(2), 100, FiveTuple::default(), Instant::ZERO);
    p.qfi = Qfi(1);
    s.apply(&mut p).unwrap();
    assert_eq!(p.len, 100);
}

#[test]
fn sdap_config_errors_name_the_field() {
    let e = SdapConfig {
        rules: vec![SdapRule { qfi: 64, drb: 1 }],
        ..SdapConfig::default()
    }
    .build()
    .unwrap_err();
    assert_eq!(e.field, "rules[0].qfi");
    let e = SdapConfig {
        rules: vec![SdapRule { qfi: 1, drb: 1 }, SdapRule { qfi: 1, drb: 2 }],
        ..SdapConfig::default()
    }
    .build()
    .unwrap_err();
    assert_eq!(e.field, "rules[1].qfi");
    let e = SdapConfig {
        default_drb: Some(33),
        ..SdapConfig::default()
    }
    .build()
    .unwrap_err();
    assert_eq!(e.field, "default_drb");
}
