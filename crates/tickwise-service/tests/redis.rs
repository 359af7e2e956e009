//! The Redis Streams engine against a real `redis-server` (started
//! privately on a free port): the same functional checks as the memory
//! queue, claim refresh for long jobs, dead letters, idempotent verdicts.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use support::*;
use tickwise::ReplayLimits;
use tickwise_catalog::Catalog;
use tickwise_service::{
    ApiLimits, ConnLimits, JobId, QueueChoice, RedisConfig, VerifydConfig, WorkerConfig,
};

/// Something running on its own thread and runtime until dropped.
struct Running {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn verifyd(catalog: Catalog, redis: &Redis, prefix: &str) -> (SocketAddr, Running) {
    verifyd_with(catalog, redis, prefix, ApiLimits::default())
}

fn verifyd_with(
    catalog: Catalog,
    redis: &Redis,
    prefix: &str,
    api: ApiLimits,
) -> (SocketAddr, Running) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let config = VerifydConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        queue: QueueChoice::Redis(RedisConfig {
            prefix: prefix.into(),
            capacity: 10_000,
            ..RedisConfig::new(redis.url())
        }),
        api,
        conn: ConnLimits::default(),
        replay: ReplayLimits::DEFAULT,
    };
    let thread = std::thread::spawn(move || {
        tickwise_service::block_on(tickwise_service::verifyd(
            Arc::new(catalog),
            config,
            move |a| addr_tx.send(a).unwrap(),
            async move {
                let _ = rx.await;
            },
        ))
        .unwrap()
        .unwrap();
    });
    let addr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    (
        addr,
        Running {
            stop: Some(tx),
            thread: Some(thread),
        },
    )
}

fn worker(
    catalog: Catalog,
    redis: &Redis,
    prefix: &str,
    jobs: usize,
    claim_idle_ms: u64,
) -> Running {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let redis_config = RedisConfig {
        prefix: prefix.into(),
        capacity: 0,
        ..RedisConfig::new(redis.url())
    };
    let config = WorkerConfig {
        jobs,
        claim_idle: Duration::from_millis(claim_idle_ms),
        block: Duration::from_millis(200),
        name: format!("test-{}", free_port()),
        ..WorkerConfig::default()
    };
    let thread = std::thread::spawn(move || {
        tickwise_service::block_on(tickwise_service::worker(
            Arc::new(catalog),
            redis_config,
            config,
            ReplayLimits::DEFAULT,
            async move {
                let _ = rx.await;
            },
        ))
        .unwrap()
        .unwrap();
    });
    Running {
        stop: Some(tx),
        thread: Some(thread),
    }
}

#[test]
fn every_kind_of_upload_gets_its_verdict_through_redis() {
    let redis = Redis::start();
    let (a, _front_a) = verifyd(Catalog::builtin(), &redis, "t1");
    let (b, _front_b) = verifyd(Catalog::builtin(), &redis, "t1");
    let _w = worker(Catalog::builtin(), &redis, "t1", 2, 2_000);
    let uploads = corpus(40, 600, 30);
    let mut ids = Vec::new();
    for (i, u) in uploads.iter().enumerate() {
        let front = if i % 2 == 0 { a } else { b };
        let (code, body) = http(front, "POST", "/v1/replays", &u.bytes);
        assert!(code == 202 || code == 200, "{} -> {code} {body}", u.kind);
        ids.push(field(&body, "id").unwrap());
    }
    for (i, (u, id)) in uploads.iter().zip(&ids).enumerate() {
        // Asked at the other front end: results live in Redis.
        let front = if i % 2 == 0 { b } else { a };
        let body = wait_verdict(front, id, Duration::from_secs(60)).expect("a verdict");
        assert_eq!(
            field(&body, "status").unwrap(),
            u.expect.as_str(),
            "{}: {body}",
            u.kind
        );
        let (code, again) = http(front, "POST", "/v1/replays", &u.bytes);
        assert_eq!((code, again), (200, body));
    }
    let (_, m) = http(a, "GET", "/metrics", b"");
    assert_eq!(jobs_total(&m), 40, "{m}");
    assert_eq!(metric(&m, "tickwise_queue_depth{queue=\"redis\"}"), 0);
}

#[test]
fn a_long_job_refreshes_its_claim_and_runs_once() {
    let redis = Redis::start();
    let (addr, _front) = verifyd(moody_catalog(), &redis, "t2");
    // Two workers with a 300 ms claim timeout; the job takes 2 s.
    let _w1 = worker(moody_catalog(), &redis, "t2", 1, 300);
    let _w2 = worker(moody_catalog(), &redis, "t2", 1, 300);
    let job = moody(&[400, 400, 400, 400, 400]);
    let (code, body) = http(addr, "POST", "/v1/replays?wait=30", &job);
    assert_eq!(
        (code, field(&body, "status").as_deref()),
        (200, Some("ok")),
        "{body}"
    );
    assert_eq!(field(&body, "attempts").as_deref(), Some("1"), "{body}");
    let (_, m) = http(addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_redeliveries_total"), 0, "{m}");
    assert_eq!(metric(&m, "tickwise_duplicate_verdicts_total"), 0, "{m}");
}

#[test]
fn a_poison_job_is_dead_lettered_after_five_deliveries() {
    let redis = Redis::start();
    let (addr, _front) = verifyd(moody_catalog(), &redis, "t3");
    let _w = worker(moody_catalog(), &redis, "t3", 1, 200);
    let poison = moody(&[0, -99]);
    let id = JobId::of(&poison).to_string();
    let (code, _) = http(addr, "POST", "/v1/replays", &poison);
    assert_eq!(code, 202);
    let body = wait_verdict(addr, &id, Duration::from_secs(30)).expect("a verdict");
    assert_eq!(field(&body, "status").as_deref(), Some("refused"), "{body}");
    assert!(
        field(&body, "error")
            .unwrap()
            .contains("dead-lettered after 5 deliveries"),
        "{body}"
    );
    assert!(
        field(&body, "error")
            .unwrap()
            .contains("moody sim refuses input -99"),
        "{body}"
    );
    let dead = redis.cli(&["XRANGE", "t3:dead", "-", "+"]);
    assert!(dead.contains(&id), "{dead}");
    assert_eq!(redis.cli(&["XLEN", "t3:jobs"]).trim(), "0");
    let (_, m) = http(addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_dead_letters_total"), 1, "{m}");
    assert_eq!(metric(&m, "tickwise_redeliveries_total"), 4, "{m}");
}

#[test]
fn a_second_verdict_never_replaces_the_first() {
    let redis = Redis::start();
    let (addr, _front) = verifyd(Catalog::builtin(), &redis, "t4");
    let u = &corpus(1, 600, 30)[0];
    let id = JobId::of(&u.bytes).to_string();
    // A verdict already stored (as a duplicate delivery would find it).
    let planted = format!(r#"{{"id":"{id}","status":"diverged","error":"planted"}}"#);
    redis.cli(&["SET", &format!("t4:result:{id}"), &planted]);
    let _w = worker(Catalog::builtin(), &redis, "t4", 1, 1_000);
    let (code, body) = http(addr, "POST", "/v1/replays?wait=5", &u.bytes);
    assert_eq!(
        (code, field(&body, "status").as_deref()),
        (200, Some("diverged")),
        "{body}"
    );
    // Even a job queued behind the stored verdict does not overwrite it.
    redis.cli(&[
        "XADD", "t4:jobs", "*", "id", &id, "meta", "{}", "bytes", "x",
    ]);
    std::thread::sleep(Duration::from_millis(800));
    let (_, body) = http(addr, "GET", &format!("/v1/replays/{id}"), b"");
    assert_eq!(field(&body, "error").as_deref(), Some("planted"), "{body}");
    let (_, m) = http(addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_duplicate_verdicts_total"), 1, "{m}");
}

#[test]
fn a_mixed_batch_through_redis_gets_one_verdict_per_replay() {
    let redis = Redis::start();
    let (a, _front_a) = verifyd(Catalog::builtin(), &redis, "t5");
    let (b, _front_b) = verifyd(Catalog::builtin(), &redis, "t5");
    let _w1 = worker(Catalog::builtin(), &redis, "t5", 1, 2_000);
    let _w2 = worker(Catalog::builtin(), &redis, "t5", 1, 2_000);
    let distinct = check_mixed_batch(a, 3);
    // Any front end answers for the whole batch.
    let again = check_mixed_batch(b, 3);
    assert_eq!(again, distinct);
    let (_, m) = http(b, "GET", "/metrics", b"");
    assert_eq!(
        jobs_total(&m),
        distinct as u64,
        "one verdict per distinct replay:\n{m}"
    );
    assert_eq!(metric(&m, "tickwise_duplicate_verdicts_total"), 0, "{m}");
    assert_eq!(redis.cli(&["XLEN", "t5:jobs"]).trim(), "0");
}

#[test]
fn batch_limits_hold_with_redis() {
    let redis = Redis::start();
    let (addr, _front) = verifyd_with(
        moody_catalog(),
        &redis,
        "t6",
        ApiLimits {
            max_upload_bytes: 64 * 1024,
            max_batch_replays: 4,
            max_batch_bytes: 256 * 1024,
            ..ApiLimits::default()
        },
    );
    check_batch_limits(addr);
    assert_eq!(
        redis.cli(&["XLEN", "t6:jobs"]).trim(),
        "0",
        "nothing queued"
    );
}

#[test]
fn a_worker_takes_many_short_jobs_per_read_and_stores_each_verdict_once() {
    let redis = Redis::start();
    let (addr, _front) = verifyd(Catalog::builtin(), &redis, "t7");
    // Queue first, then start one worker: it finds 60 short jobs waiting.
    let uploads: Vec<Vec<u8>> = (0..60u64)
        .map(|i| {
            Catalog::builtin()
                .record(
                    "island",
                    None,
                    &tickwise_catalog::InputPlan::Random(1000 + i),
                    600,
                    60,
                )
                .unwrap()
                .bytes
        })
        .collect();
    let refs: Vec<&[u8]> = uploads.iter().map(Vec::as_slice).collect();
    let (code, body) = post_batch(addr, "/v1/batches", &frame(&refs));
    assert_eq!(code, 202, "{body}");
    assert_eq!(redis.cli(&["XLEN", "t7:jobs"]).trim(), "60");
    let _w = worker(Catalog::builtin(), &redis, "t7", 1, 2_000);
    let ids: Vec<String> = refs.iter().map(|b| job_id(b)).collect();
    let (code, body) = http(
        addr,
        "GET",
        &format!("/v1/replays?ids={}&wait=30", ids.join(",")),
        b"",
    );
    assert_eq!(code, 200, "{body}");
    let got = replays_of(&body);
    assert_eq!(got.len(), 60);
    assert!(
        got.iter()
            .all(|r| r["status"] == "ok" && r["attempts"] == 1),
        "{body}"
    );
    let (_, m) = http(addr, "GET", "/metrics", b"");
    assert_eq!(metric(&m, "tickwise_jobs_total{outcome=\"ok\"}"), 60, "{m}");
    assert_eq!(metric(&m, "tickwise_duplicate_verdicts_total"), 0, "{m}");
    assert_eq!(metric(&m, "tickwise_redeliveries_total"), 0, "{m}");
    assert_eq!(redis.cli(&["XLEN", "t7:jobs"]).trim(), "0");
    assert_eq!(
        redis
            .cli(&["XPENDING", "t7:jobs", "t7:workers"])
            .lines()
            .next()
            .unwrap()
            .trim(),
        "0"
    );
}

/// Issue 20, finding 5 with Redis: a worker asked to stop during a long
/// job returns after its grace period, leaving the job unacknowledged, and
/// another worker finishes it.
#[test]
fn a_stopped_worker_leaves_its_unfinished_job_to_the_others() {
    let redis = Redis::start();
    let (addr, _front) = verifyd(moody_catalog(), &redis, "t8");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let config = WorkerConfig {
        jobs: 1,
        claim_idle: Duration::from_millis(500),
        block: Duration::from_millis(200),
        name: format!("test-{}", free_port()),
        shutdown_grace: Duration::from_millis(500),
    };
    let redis_config = RedisConfig {
        prefix: "t8".into(),
        ..RedisConfig::new(redis.url())
    };
    let thread = std::thread::spawn(move || {
        tickwise_service::block_on(tickwise_service::worker(
            Arc::new(moody_catalog()),
            redis_config,
            config,
            ReplayLimits::DEFAULT,
            async move {
                let _ = rx.await;
            },
        ))
        .unwrap()
        .unwrap();
        let _ = done_tx.send(());
    });
    // Ten seconds of work.
    let long = moody(&[1000; 10]);
    let id = JobId::of(&long).to_string();
    assert_eq!(http(addr, "POST", "/v1/replays", &long).0, 202);
    let end = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, body) = http(addr, "GET", &format!("/v1/replays/{id}"), b"");
        if field(&body, "status").as_deref() == Some("running") {
            break;
        }
        assert!(std::time::Instant::now() < end, "never ran: {body}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let t = std::time::Instant::now();
    let _ = tx.send(());
    done_rx
        .recv_timeout(Duration::from_secs(3))
        .expect("the worker did not stop within 3 s");
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "stopped after {:?}",
        t.elapsed()
    );
    drop(thread);
    // Not acknowledged: still pending, no verdict.
    let pending = redis.cli(&["XPENDING", "t8:jobs", "t8:workers"]);
    assert_eq!(pending.lines().next().unwrap().trim(), "1", "{pending}");
    let (_, body) = http(addr, "GET", &format!("/v1/replays/{id}"), b"");
    assert_ne!(field(&body, "status").as_deref(), Some("ok"), "{body}");
    // Another worker takes it over and finishes it (its second delivery).
    let _w = worker(moody_catalog(), &redis, "t8", 1, 500);
    let body = wait_verdict(addr, &id, Duration::from_secs(30)).expect("a verdict");
    assert_eq!(field(&body, "status").as_deref(), Some("ok"), "{body}");
    assert_eq!(field(&body, "attempts").as_deref(), Some("2"), "{body}");
}

/// Issue 20, findings 2 and 3 with Redis: the queue is bounded in bytes,
/// a client's queued work is bounded, and both are given back when the
/// verdicts are stored.
#[test]
fn the_redis_queue_counts_bytes_and_each_clients_work() {
    let redis = Redis::start();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let jobs: Vec<Vec<u8>> = (0..4)
        .map(|i| moody(&[0, 0, 0, 0, 0, 0, 0, 0, 0, i]))
        .collect();
    let config = VerifydConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        queue: QueueChoice::Redis(RedisConfig {
            prefix: "t9".into(),
            max_queued_bytes: (jobs[0].len() * 5 / 2) as u64,
            max_client_work: 25,
            ..RedisConfig::new(redis.url())
        }),
        api: ApiLimits::default(),
        conn: ConnLimits::default(),
        replay: ReplayLimits::DEFAULT,
    };
    let _front = {
        let thread = std::thread::spawn(move || {
            tickwise_service::block_on(tickwise_service::verifyd(
                Arc::new(moody_catalog()),
                config,
                move |a| addr_tx.send(a).unwrap(),
                async move {
                    let _ = rx.await;
                },
            ))
            .unwrap()
            .unwrap();
        });
        Running {
            stop: Some(tx),
            thread: Some(thread),
        }
    };
    let addr: SocketAddr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // No worker yet: two 10-tick jobs (20 units, two jobs' bytes) queue.
    assert_eq!(http(addr, "POST", "/v1/replays", &jobs[0]).0, 202);
    assert_eq!(http(addr, "POST", "/v1/replays", &jobs[1]).0, 202);
    let (code, body) = http(addr, "POST", "/v1/replays", &jobs[2]);
    assert_eq!(code, 429, "{body}");
    assert!(field(&body, "error").unwrap().contains("bytes"), "{body}");
    assert_eq!(
        redis.cli(&["GET", "t9:bytes"]).trim(),
        (jobs[0].len() + jobs[1].len()).to_string()
    );
    assert_eq!(redis.cli(&["GET", "t9:client:127.0.0.1"]).trim(), "20");
    // Once verified, bytes and work are given back.
    let _w = worker(moody_catalog(), &redis, "t9", 1, 2_000);
    for j in &jobs[..2] {
        let id = JobId::of(j).to_string();
        wait_verdict(addr, &id, Duration::from_secs(20)).expect("a verdict");
    }
    assert_eq!(
        redis
            .cli(&["EXISTS", "t9:bytes", "t9:client:127.0.0.1"])
            .trim(),
        "0"
    );
    // The client bound: three 10-unit jobs in one batch pass 25.
    let more: Vec<Vec<u8>> = (10..13)
        .map(|i| moody(&[0, 0, 0, 0, 0, 0, 0, 0, 0, i]))
        .collect();
    let fresh: Vec<&[u8]> = more.iter().map(Vec::as_slice).collect();
    let (code, body) = post_batch(addr, "/v1/batches", &frame(&fresh));
    assert_eq!(code, 429, "30 units for a bound of 25: {body}");
    assert!(
        field(&body, "error")
            .unwrap()
            .contains("per-client limit of 25"),
        "{body}"
    );
}

/// Issue 20, finding 2 with Redis: large jobs go to a stream of their own,
/// which each worker reads with its own loops, so two large jobs running
/// do not keep a small one from its verdict within 2 s (with one stream,
/// the small one waited 3.9 s here).
#[test]
fn large_jobs_through_redis_do_not_delay_a_small_one() {
    let redis = Redis::start();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let config = VerifydConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        queue: QueueChoice::Redis(RedisConfig {
            prefix: "t10".into(),
            // A moody tick is one work unit: 12-tick jobs are large.
            small_job_work: 10,
            ..RedisConfig::new(redis.url())
        }),
        api: ApiLimits::default(),
        conn: ConnLimits::default(),
        replay: ReplayLimits::DEFAULT,
    };
    let _front = {
        let thread = std::thread::spawn(move || {
            tickwise_service::block_on(tickwise_service::verifyd(
                Arc::new(moody_catalog()),
                config,
                move |a| addr_tx.send(a).unwrap(),
                async move {
                    let _ = rx.await;
                },
            ))
            .unwrap()
            .unwrap();
        });
        Running {
            stop: Some(tx),
            thread: Some(thread),
        }
    };
    let addr: SocketAddr = addr_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // Two loops per lane.
    let _w = worker(moody_catalog(), &redis, "t10", 2, 5_000);
    for i in 0..2 {
        let large = moody(&[400, 400, 400, 400, 400, 400, 400, 400, 400, 400, 400, i]);
        assert_eq!(http(addr, "POST", "/v1/replays", &large).0, 202);
    }
    assert_eq!(redis.cli(&["XLEN", "t10:jobs:large"]).trim(), "2");
    std::thread::sleep(Duration::from_millis(500));
    let (_, health) = http(addr, "GET", "/healthz", b"");
    assert_eq!(field(&health, "running").as_deref(), Some("2"), "{health}");
    let t = std::time::Instant::now();
    let (code, body) = http(addr, "POST", "/v1/replays?wait=10", &moody(&[0, 0, 5]));
    let took = t.elapsed();
    assert_eq!(
        (code, field(&body, "status").as_deref()),
        (200, Some("ok")),
        "{body}"
    );
    assert!(
        took < Duration::from_secs(2),
        "the small job's verdict took {took:?}"
    );
}
