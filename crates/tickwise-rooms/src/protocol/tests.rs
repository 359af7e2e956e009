use super::*;
use crate::create::{CreateError, CreateRequest};

#[test]
fn client_messages_parse_exactly() {
    assert_eq!(
        ClientMsg::parse(r#"{"t":"join","role":"player"}"#),
        Ok(ClientMsg::Join {
            role: Role::Player,
            slot: None
        })
    );
    assert_eq!(
        ClientMsg::parse(r#"{"role":"spectator","slot":5,"t":"join"}"#),
        Ok(ClientMsg::Join {
            role: Role::Spectator,
            slot: Some(5)
        })
    );
    assert_eq!(
        ClientMsg::parse(r#"{"t":"signal","to":1,"data":{"sdp":"v=0"}}"#),
        Ok(ClientMsg::Signal {
            to: 1,
            data: serde_json::json!({"sdp": "v=0"})
        })
    );
    assert_eq!(
        ClientMsg::parse(r#"{"t":"ready"}"#),
        Ok(ClientMsg::Ready {})
    );
    assert_eq!(
        ClientMsg::parse(r#"{"t":"ping","id":9007199254740991}"#),
        Ok(ClientMsg::Ping {
            id: Some(MAX_PING_ID)
        })
    );
    assert_eq!(
        ClientMsg::parse(r#"{"t":"leave"}"#),
        Ok(ClientMsg::Leave {})
    );
}

#[test]
fn bad_client_messages_are_refused() {
    for bad in [
        "",
        "null",
        "[]",
        "{}",
        r#"{"t":"jump"}"#,
        r#"{"t":"join"}"#,
        r#"{"t":"join","role":"king"}"#,
        r#"{"t":"join","role":"player","slot":256}"#,
        r#"{"t":"join","role":"player","slot":-1}"#,
        r#"{"t":"join","role":"player","extra":1}"#,
        r#"{"t":"join","role":"player","role":"spectator"}"#,
        r#"{"t":"signal","to":1}"#,
        r#"{"t":"signal","to":1,"to":2,"data":1}"#,
        r#"{"t":"ready","x":1}"#,
        r#"{"t":"leave","x":null}"#,
        r#"{"t":"ping","id":9007199254740992}"#,
        r#"{"t":"ping","id":1.5}"#,
        r#"{"t":"ping","id":"1"}"#,
        r#"{"t":1}"#,
        r#"{"t":"ready"} x"#,
    ] {
        assert!(
            matches!(ClientMsg::parse(bad), Err(ParseError::Invalid { .. })),
            "{bad:?} -> {:?}",
            ClientMsg::parse(bad)
        );
    }
    let deep = format!("{}{}", "[".repeat(5_000), "]".repeat(5_000));
    let deep = format!(r#"{{"t":"signal","to":1,"data":{deep}}}"#);
    assert!(matches!(
        ClientMsg::parse(&deep),
        Err(ParseError::Invalid { .. })
    ));
    let big = format!(
        r#"{{"t":"signal","to":1,"data":"{}"}}"#,
        "x".repeat(MAX_TEXT_BYTES)
    );
    assert_eq!(
        ClientMsg::parse(&big),
        Err(ParseError::TooBig {
            len: MAX_TEXT_BYTES + 31, // 29 bytes before the string, 2 after
            limit: MAX_TEXT_BYTES
        })
    );
}

#[test]
fn client_messages_round_trip() {
    for m in [
        ClientMsg::Join {
            role: Role::Player,
            slot: Some(2),
        },
        ClientMsg::Join {
            role: Role::Spectator,
            slot: None,
        },
        ClientMsg::Signal {
            to: 3,
            data: serde_json::json!(["a", 1, null]),
        },
        ClientMsg::Ready {},
        ClientMsg::Ping { id: Some(7) },
        ClientMsg::Ping { id: None },
        ClientMsg::Leave {},
    ] {
        assert_eq!(ClientMsg::parse(&m.to_text()), Ok(m));
    }
}

#[test]
fn server_messages_have_the_documented_shape() {
    let spec = RoomSpec {
        sim: "horde".into(),
        version: 3,
        config: "{}".into(),
        players: 2,
        spectators: 1,
        ticks: 600,
        check_every: 1,
        disconnect_after: 300,
    };
    let w = ServerMsg::Welcome(Welcome {
        slot: 1,
        role: Role::Player,
        code: "c".into(),
        spec,
        session_key: "00".repeat(16),
        started: false,
        peers: vec![PeerInfo {
            slot: 0,
            role: Role::Player,
            ready: true,
        }],
    });
    let v: Value = serde_json::from_str(&w.to_text()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"t":"welcome","slot":1,"role":"player","code":"c",
            "sim":"horde","version":3,"config":"{}","players":2,"spectators":1,
            "ticks":600,"checkEvery":1,"disconnectAfter":300,
            "sessionKey":"00000000000000000000000000000000","started":false,
            "peers":[{"slot":0,"role":"player","ready":true}]})
    );
    assert_eq!(ServerMsg::parse(&w.to_text()), Ok(w));
    assert_eq!(
        ServerMsg::Start {}.to_text(),
        r#"{"t":"start"}"#,
        "start has no fields"
    );
    assert_eq!(ServerMsg::Pong { id: None }.to_text(), r#"{"t":"pong"}"#);
    assert_eq!(
        ServerMsg::error(Reason::RoomFull, "full").to_text(),
        r#"{"t":"error","reason":"room-full","message":"full"}"#
    );
    // Clients are lenient: unknown fields and kinds pass.
    assert_eq!(
        ServerMsg::parse(r#"{"t":"left","slot":1,"why":"gone"}"#),
        Ok(ServerMsg::Left { slot: 1 })
    );
    assert_eq!(
        ServerMsg::parse(r#"{"t":"weather","sun":true}"#),
        Ok(ServerMsg::Unknown)
    );
}

#[test]
fn create_requests_are_checked() {
    let r = CreateRequest::parse(br#"{"sim":"horde","players":2}"#).unwrap();
    assert_eq!(
        (
            r.version,
            r.spectators,
            r.ticks,
            r.check_every,
            r.disconnect_after
        ),
        (None, 0, 3600, 1, 300)
    );
    assert_eq!(
        CreateRequest::parse(br#"{"sim":"horde","players":5}"#),
        Err(CreateError::Range {
            field: "players",
            found: 5,
            min: 2,
            max: 4
        })
    );
    assert!(matches!(
        CreateRequest::parse(br#"{"sim":"horde","players":2,"spectators":9}"#),
        Err(CreateError::Range {
            field: "spectators",
            ..
        })
    ));
    assert!(matches!(
        CreateRequest::parse(br#"{"sim":"horde","players":2,"ticks":0}"#),
        Err(CreateError::Range { field: "ticks", .. })
    ));
    assert!(matches!(
        CreateRequest::parse(br#"{"sim":"horde","players":2,"colour":"red"}"#),
        Err(CreateError::Invalid { .. })
    ));
    assert!(matches!(
        CreateRequest::parse(br#"{"sim":"horde","players":2,"players":3}"#),
        Err(CreateError::Invalid { .. })
    ));
    let cfg = format!(
        r#"{{"sim":"horde","players":2,"config":"{}"}}"#,
        "x".repeat(MAX_CONFIG_BYTES + 1)
    );
    assert_eq!(
        CreateRequest::parse(cfg.as_bytes()),
        Err(CreateError::ConfigTooBig {
            len: MAX_CONFIG_BYTES + 1
        })
    );
}

#[test]
fn relay_frames() {
    assert_eq!(
        RelayFrame::parse(&[1, 9, 9]),
        Ok(RelayFrame {
            to: 1,
            datagram: &[9, 9]
        })
    );
    assert_eq!(
        RelayFrame::parse(&[2]),
        Ok(RelayFrame {
            to: 2,
            datagram: &[]
        })
    );
    assert_eq!(RelayFrame::parse(&[]), Err(Reason::BadMessage));
    assert_eq!(RelayFrame::parse(&[0; 510]), Err(Reason::TooBig));
    assert!(RelayFrame::parse(&[0; 509]).is_ok());
    assert_eq!(relay_out(3, &[7, 8]), vec![3, 7, 8]);
}

#[test]
fn seats() {
    let spec = RoomSpec {
        sim: "x".into(),
        version: 1,
        config: String::new(),
        players: 3,
        spectators: 2,
        ticks: 1,
        check_every: 1,
        disconnect_after: 1,
    };
    let roles: Vec<Option<Role>> = (0..8).map(|s| spec.seat_role(s)).collect();
    use Role::{Player as P, Spectator as S};
    assert_eq!(
        roles,
        [
            Some(P),
            Some(P),
            Some(P),
            None,
            Some(S),
            Some(S),
            None,
            None
        ]
    );
    assert_eq!(spec.seat_role(255), None);
    assert_eq!(spec.seats(Role::Spectator).collect::<Vec<_>>(), [4, 5]);
}
