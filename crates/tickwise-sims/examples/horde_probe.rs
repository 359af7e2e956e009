use std::time::Instant;
use tickwise::Sim;
use tickwise_sims::horde::*;
fn main() {
    let n: u64 = std::env::args().nth(1).unwrap().parse().unwrap();
    let ticks: u64 = std::env::args()
        .nth(2)
        .unwrap_or("600".into())
        .parse()
        .unwrap();
    let cfg = HordeConfig::from_json(include_bytes!("../../../config/horde.json"))
        .unwrap()
        .with_enemies(n)
        .unwrap();
    let mut w = HordeWorld::new(&cfg);
    for t in 0..ticks {
        let s = Instant::now();
        w.step(&demo_input(t));
        let e = s.elapsed();
        if t % 30 == 0 || e.as_micros() > 5000 {
            let (px, py) = (w.player_x(), w.player_y());
            let mut maxd = 0i64;
            let mut sumd = 0i64;
            for i in 0..w.enemy_count() {
                if w.enemy_hp()[i] > 0 {
                    let d = ((w.enemy_x()[i] - px) as i64)
                        .abs()
                        .max(((w.enemy_y()[i] - py) as i64).abs())
                        / 256;
                    maxd = maxd.max(d);
                    sumd += d;
                }
            }
            println!(
                "t={t} us={} alive={} pairs={} contacts={} maxd={} meand={} kills={}",
                e.as_micros(),
                w.alive(),
                w.last_pairs(),
                w.last_contacts(),
                maxd,
                sumd / w.alive().max(1) as i64,
                w.kills()
            );
        }
    }
}
