//! The grid against brute force and against itself on several threads.

use super::*;
use alloc::collections::BTreeSet;
use tickwise::Pcg32;

/// Random points in a `w × h` sub-pixel field, about a fifth dead.
fn points(seed: u64, n: usize, w: i32, h: i32) -> (Vec<Body>, Vec<i32>) {
    let mut r = Pcg32::new(seed, 7);
    let pos = (0..n as u32)
        .map(|id| Body {
            x: r.range_i32(0, w - 1),
            y: r.range_i32(0, h - 1),
            id,
        })
        .collect();
    let hp = (0..n).map(|_| i32::from(r.below(5) != 0)).collect();
    (pos, hp)
}

/// Builds the grid and returns `sorted[new slot] = old slot`.
fn sorted(g: &mut Grid, pos: &[Body], hp: &[i32]) -> Vec<usize> {
    sorted_by(g, false, pos, hp)
}

/// The same, serially or by bands (`par`), checking it is a permutation.
fn sorted_by(g: &mut Grid, par: bool, pos: &[Body], hp: &[i32]) -> Vec<usize> {
    g.build(par, Bounds::of(pos, hp), pos, hp);
    let mut seen = alloc::vec![false; hp.len()];
    for &old in g.order() {
        assert!(!seen[old as usize], "slot {old} moved twice");
        seen[old as usize] = true;
    }
    g.order().iter().map(|&k| k as usize).collect()
}

#[test]
fn stable_sort_by_cell_with_the_dead_last() {
    // Placed by rank, and past `RANKED_SORT_MAX` by bumping each bucket's
    // start.
    for (seed, n) in [(1, 500), (2, RANKED_SORT_MAX + 777)] {
        let (pos, hp) = points(seed, n, 4000, 3000);
        let mut g = Grid::new(300, 14, 10, n);
        let inv = sorted(&mut g, &pos, &hp);
        let live = hp.iter().filter(|&&h| h > 0).count();
        assert_eq!(g.len(), live);
        // Independent key: (alive first, row, col, old slot) increases
        // along the new order.
        let key = |old: usize| {
            let Body { x, y, .. } = pos[old];
            (
                hp[old] <= 0,
                if hp[old] > 0 {
                    (y / 300, x / 300)
                } else {
                    (0, 0)
                },
                old,
            )
        };
        assert!(inv.windows(2).all(|w| key(w[0]) < key(w[1])), "{n} slots");
    }
}

#[test]
fn candidate_pairs_cover_every_close_pair_exactly_once() {
    // Brute force: every live pair within one cell side (Chebyshev) must be
    // a candidate, and no pair may come twice.
    for seed in 0..20 {
        let (pos, hp) = points(seed, 300, 2000, 1500);
        let cell = 100;
        let mut g = Grid::new(cell, 20, 15, 300);
        let inv = sorted(&mut g, &pos, &hp);
        let mut got = BTreeSet::new();
        g.for_each_candidate_pair(|k, m| {
            assert!(k < g.len() && m < g.len());
            let (i, j) = (inv[k], inv[m]);
            assert!(got.insert((i.min(j), i.max(j))), "pair {i},{j} twice");
        });
        for i in 0..300usize {
            for j in i + 1..300 {
                let close =
                    (pos[i].x - pos[j].x).abs() < cell && (pos[i].y - pos[j].y).abs() < cell;
                if hp[i] > 0 && hp[j] > 0 && close {
                    assert!(got.contains(&(i, j)), "seed {seed}: missed {i},{j}");
                }
            }
        }
    }
}

#[test]
fn box_ranges_hold_every_enemy_in_the_box() {
    let (pos, hp) = points(3, 400, 5000, 5000);
    let mut g = Grid::new(250, 20, 20, 400);
    let inv = sorted(&mut g, &pos, &hp);
    for (x_lo, x_hi, y_lo, y_hi) in [
        (1000, 1600, 2000, 2100),
        (-500, 100, -500, 6000),
        (4900, 9000, 4900, 9000),
        (6000, 7000, 0, 10),
    ] {
        let found: BTreeSet<usize> = g
            .box_ranges(x_lo, x_hi, y_lo, y_hi)
            .flatten()
            .map(|k| inv[k])
            .collect();
        for i in 0..400usize {
            let inside = (x_lo..=x_hi).contains(&i64::from(pos[i].x))
                && (y_lo..=y_hi).contains(&i64::from(pos[i].y));
            if hp[i] > 0 && inside {
                assert!(found.contains(&i), "missed {i}");
            }
            if hp[i] <= 0 {
                assert!(!found.contains(&i), "dead {i} listed");
            }
        }
    }
}

#[test]
fn nothing_alive_is_an_empty_grid_and_the_identity() {
    let mut g = Grid::new(10, 4, 4, 3);
    let b = |v| Body { x: v, y: v, id: 0 };
    let (pos, hp) = ([b(1), b(2), b(3)], [0, 0, -5]);
    g.build(false, Bounds::of(&pos, &hp), &pos, &hp);
    assert_eq!(g.len(), 0);
    assert_eq!(g.order(), &[0, 1, 2]);
    g.for_each_candidate_pair(|_, _| panic!("no pairs"));
    assert_eq!(g.box_ranges(0, 100, 0, 100).count(), 0);
}

#[test]
fn the_banded_sort_is_the_serial_sort() {
    // Several pieces of CHUNK slots and many bands; a clone sorts too
    // (its buffers come back on its first build). The serial result is
    // itself checked against an independent key above.
    for (seed, n, w, h) in [
        (4, 3 * CHUNK + 17, 90_000, 70_000),
        (5, 2 * CHUNK + 1, 3_000, 400_000),
        (6, 5 * CHUNK, 400_000, 2_000),
        (7, RANKED_SORT_MAX + 3 * CHUNK + 5, 400_000, 300_000),
    ] {
        let (pos, hp) = points(seed, n, w, h);
        let mut g = Grid::new(1000, 400, 400, n);
        let serial = sorted_by(&mut g, false, &pos, &hp);
        let (start, cells) = (g.start.clone(), g.slot_cell.clone());
        let mut copy = g.clone();
        assert!(copy.start.is_empty());
        assert_eq!(sorted_by(&mut copy, true, &pos, &hp), serial);
        assert_eq!(copy.slot_cell, cells);
        let used = copy.stride * (copy.rows + 1) + 2;
        assert_eq!(copy.start[..used], start[..used]);
    }
}
