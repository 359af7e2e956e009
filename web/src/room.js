// The room page: one player per tab of a match of any catalog sim, in a room
// of `tickwise serve` or of a game's own `serve` (docs/rooms.md). This file
// is the lobby, shared by every game (the horde's web/src/room-main.js, the
// duel's examples/duel-web/room/room-main.js): it creates or
// joins the room over its WebSocket, negotiates a WebRTC data channel with
// every other player (offer, answer and ICE candidates go through the
// room's `signal` messages; the lower seat of each pair offers), and shows
// who is in, ready, ping and `direct`/`relay` per peer. When the room says
// `start` it hands the room's `welcome`, the WebSocket and the open channels
// to Rust (`RoomMatch`): the session, its clock and the transport (data
// channel while open, the room's relay otherwise) are all Rust. A tab that
// was away longer than the match's `disconnectAfter` joins its seat again
// and rejoins the match (docs/netplay.md, "Rejoining").
//
// The game's part is a small module that calls `boot(game)` with:
//   init, RoomMatch    its wasm-bindgen module's init and its `room_page!` class
//   title, blurb       the page's heading and one line under it (text)
//   players            the player counts the create form offers, e.g. [2, 3, 4]
//   canvas             [width, height] of the match canvas, px
//   draw(ctx, match, info, slot)  draws a frame: match.interpolated(), info =
//                      JSON.parse(match.drawInfo()), slot = this tab's seat
//   rows               optional extra counter rows: [[label, (state) => text]]
//
// URL options: ?room=CODE (join), ?relay=1 (never a data channel),
// ?auto=1 (say ready on joining), ?players=N&ticks=T&disconnectAfter=D
// (with ?create=1: create such a room on load).
//
// window.__tickwiseNet
//   state() -> { players, slot, confirmedTick, confirmedChecksum, desyncs,
//                connection: { relayOnly, peers: [{ slot, path, sentDirect,
//                  sentDirectBytes, sentRelay, sentRelayBytes, receivedDirect,
//                  receivedRelay, unsent }], ... },
//                phase, finished, currentTick, lag, rttTicks, departed, sim,
//                ...the sim's own fields (the horde's heroes, the duel's paddles),
//                lobby: { code, slot, members, serverPingMs, started, rejoins } }
//                (match fields null before the start)
//   replay() -> base64                  the match replay (a tab that rejoined has none)
//   downloadReplay() -> file name
//   create({ players, ticks, disconnectAfter }) -> code   create and join a room
//   ready()                             say ready (the match starts when all are)
//   rejoin()                            leave the seat and take it back (test hook)
import { frameLoop, wireKeys, wireVisibility } from './platform.js';
import { throttledReadout } from './meter.js';
import { downloadBase64 } from './replay.js';

const CHANNEL = { ordered: false, maxRetransmits: 0 };
const PING_EVERY_MS = 2000; // the server closes a silent connection after 30 s
const ROWS = [
  ['phase', (s) => s.phase],
  ['current tick', (s) => s.currentTick],
  ['confirmed tick', (s) => `${s.confirmedTick} / ${s.stopAt}`],
  ['confirmed checksum', (s) => s.confirmedChecksum ?? '-'],
  ['desyncs', (s) => s.desyncs],
  ['rollbacks', (s) => s.rollbacks],
  ['stalls', (s) => s.stalls],
  ['datagrams sent / received', (s) => `${s.sent} / ${s.received}`],
  ['remote input lag (ticks, mean)', (s) => (s.lag.samples ? (s.lag.sum / s.lag.samples).toFixed(2) : '-')],
];

export async function boot(game) {
  const { RoomMatch } = game;
  await game.init();
  const params = new URLSearchParams(location.search);
  const relayOnly = params.get('relay') === '1';
  const $ = (id) => document.getElementById(id);
  // The game's heading, create form and canvas.
  document.title = `tickwise · ${game.title}`;
  $('title').textContent = game.title;
  $('blurb').textContent = game.blurb;
  for (const n of game.players) $('players').appendChild(new Option(String(n), String(n)));
  const [cw, ch] = game.canvas;
  Object.assign($('view'), { width: cw, height: ch });
  $('view').style.aspectRatio = `${cw} / ${ch}`;
  const rows = [...ROWS, ...(game.rows ?? [])];
  const setStatus = (text, err = false) => {
    $('status').textContent = text;
    $('status').className = err ? 'mono err' : 'mono';
  };

  // Lobby state.
  let code = params.get('room');
  let ws = null;
  let welcome = null;
  let members = new Map(); // slot -> { role, ready }
  const links = new Map(); // slot -> { pc, dc, open, pingMs, pending: [] }
  let serverPingMs = null;
  let started = false;
  let rejoins = 0;
  let pingTimer = null;
  let rejoinSlot = null; // the seat being taken back, while rejoining
  let joinTries = 0;
  // Match state.
  let match = null;
  let info = null;
  let lastFrameMs = null;

  const send = (msg) => {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  };

  // --- WebRTC: one peer connection per other player -----------------------
  function closeLink(slot) {
    const l = links.get(slot);
    if (!l) return;
    links.delete(slot);
    if (match) match.dropChannel(slot);
    try { l.pc.close(); } catch { /* already closed */ }
  }

  function wireChannel(slot, l, dc) {
    l.dc = dc;
    dc.binaryType = 'arraybuffer';
    // Lobby pings over the channel (text); the match's datagrams are binary
    // and go to Rust, which takes `onmessage` over when the match starts.
    dc.onmessage = (e) => {
      if (typeof e.data !== 'string') return;
      const [kind, t] = e.data.split(':');
      if (kind === 'ping') dc.send(`pong:${t}`);
      else if (kind === 'pong') l.pingMs = Math.round(performance.now() - Number(t));
    };
    dc.onopen = () => {
      l.open = true;
      if (match) match.addChannel(slot, dc);
      render();
    };
    dc.onclose = () => {
      l.open = false;
      render();
    };
  }

  function newLink(slot) {
    closeLink(slot);
    const pc = new RTCPeerConnection({ iceServers: [] });
    const l = { pc, dc: null, open: false, pingMs: null, pending: [] };
    links.set(slot, l);
    pc.onicecandidate = (e) => {
      if (e.candidate) send({ t: 'signal', to: slot, data: { candidate: e.candidate.toJSON() } });
    };
    return l;
  }

  async function offer(slot) {
    const l = newLink(slot);
    wireChannel(slot, l, l.pc.createDataChannel('tickwise', CHANNEL));
    const o = await l.pc.createOffer();
    await l.pc.setLocalDescription(o);
    send({ t: 'signal', to: slot, data: { sdp: { type: o.type, sdp: o.sdp } } });
  }

  async function onSignal(from, data) {
    if (relayOnly || !data || typeof data !== 'object') return;
    try {
      if (data.sdp && data.sdp.type === 'offer') {
        const l = newLink(from);
        l.pc.ondatachannel = (e) => wireChannel(from, l, e.channel);
        await l.pc.setRemoteDescription(data.sdp);
        const a = await l.pc.createAnswer();
        await l.pc.setLocalDescription(a);
        send({ t: 'signal', to: from, data: { sdp: { type: a.type, sdp: a.sdp } } });
        for (const c of l.pending.splice(0)) await l.pc.addIceCandidate(c);
      } else if (data.sdp && data.sdp.type === 'answer') {
        const l = links.get(from);
        if (!l) return;
        await l.pc.setRemoteDescription(data.sdp);
        for (const c of l.pending.splice(0)) await l.pc.addIceCandidate(c);
      } else if (data.candidate) {
        const l = links.get(from);
        if (!l) return;
        if (l.pc.remoteDescription) await l.pc.addIceCandidate(data.candidate);
        else if (l.pending.length < 64) l.pending.push(data.candidate);
      }
    } catch (err) {
      // A failed negotiation leaves this pair on the relay.
      setStatus(`WebRTC with player ${from}: ${err && err.message ? err.message : err} (relay in use)`);
    }
  }

  // The lower seat of each pair offers, whenever both are in the room.
  function maybeOffer(slot, role) {
    if (relayOnly || role !== 'player' || !welcome || slot === welcome.slot) return;
    if (welcome.slot < slot) offer(slot).catch((err) => setStatus(`offer to ${slot}: ${err.message}`));
  }

  // --- The room's WebSocket ---------------------------------------------------
  function join(roomCode, slot = undefined) {
    code = roomCode;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/rooms/${encodeURIComponent(code)}`;
    const sock = new WebSocket(url);
    ws = sock;
    sock.binaryType = 'arraybuffer';
    sock.onopen = () => {
      const msg = { t: 'join', role: 'player' };
      if (slot !== undefined) msg.slot = slot;
      sock.send(JSON.stringify(msg));
    };
    sock.addEventListener('message', (e) => {
      if (typeof e.data !== 'string' || sock !== ws) return;
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      onMessage(msg);
    });
    sock.onclose = (e) => {
      if (sock !== ws) return;
      setStatus(`room connection closed: ${e.code} ${e.reason || ''}`, !(match && matchState().finished));
      render();
    };
    clearInterval(pingTimer);
    pingTimer = setInterval(() => send({ t: 'ping', id: Math.round(performance.now()) }), PING_EVERY_MS);
  }

  function onMessage(msg) {
    switch (msg.t) {
      case 'welcome':
        welcome = msg;
        members = new Map(msg.peers.map((p) => [p.slot, { role: p.role, ready: p.ready }]));
        members.set(msg.slot, { role: msg.role, ready: false });
        history.replaceState(null, '', `?room=${encodeURIComponent(code)}${relayOnly ? '&relay=1' : ''}`);
        for (const p of msg.peers) maybeOffer(p.slot, p.role);
        rejoinSlot = null;
        if (msg.started) startMatch();
        else if (params.get('auto') === '1') ready();
        setStatus(msg.started ? `rejoining the match as player ${msg.slot}` : `in room ${code} as player ${msg.slot}`);
        break;
      case 'joined':
        members.set(msg.slot, { role: msg.role, ready: false });
        maybeOffer(msg.slot, msg.role);
        break;
      case 'left':
        members.delete(msg.slot);
        closeLink(msg.slot);
        break;
      case 'ready':
        if (members.has(msg.slot)) members.get(msg.slot).ready = true;
        break;
      case 'start':
        startMatch();
        break;
      case 'signal':
        onSignal(msg.from, msg.data);
        break;
      case 'pong':
        if (typeof msg.id === 'number') serverPingMs = Math.round(performance.now() - msg.id);
        for (const l of links.values()) {
          if (l.open && l.dc.readyState === 'open' && !match) l.dc.send(`ping:${performance.now()}`);
        }
        break;
      case 'error':
        // Taking a seat back can race the server freeing it: try again.
        if (msg.reason === 'room-full' && rejoinSlot !== null && joinTries < 10) {
          joinTries += 1;
          const slot = rejoinSlot;
          setTimeout(() => join(code, slot), 300);
          setStatus(`seat ${slot} not free yet: joining again (${joinTries})`);
          break;
        }
        setStatus(`room: ${msg.reason}: ${msg.message}`, true);
        break;
      default:
        break; // later versions may add messages
    }
    render();
  }

  function ready() {
    send({ t: 'ready' });
  }

  async function create(opts = {}) {
    const body = {
      sim: RoomMatch.simId(),
      version: RoomMatch.simVersion(),
      players: Number(opts.players ?? $('players').value),
      ticks: Number(opts.ticks ?? Math.round(Number($('seconds').value) * RoomMatch.ticksPerSecond())),
    };
    if (opts.disconnectAfter !== undefined) body.disconnectAfter = Number(opts.disconnectAfter);
    const r = await fetch('/v1/rooms', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(`create room: ${r.status} ${j.error ?? ''}`);
    join(j.code);
    return j.code;
  }

  // --- The match (Rust) -------------------------------------------------------
  const loop = frameLoop(frame);

  function startMatch() {
    if (match) return;
    started = true;
    try {
      match = new RoomMatch(JSON.stringify(welcome), ws, relayOnly);
    } catch (err) {
      // A room this page cannot play (another sim or version, a bad field):
      // say which, and play nothing.
      setStatus(`cannot play this room: ${err && err.message ? err.message : err}`, true);
      return;
    }
    info = JSON.parse(match.drawInfo());
    for (const [slot, l] of links) if (l.open) match.addChannel(slot, l.dc);
    lastFrameMs = null;
    match.reanchor();
    loop.start();
    setStatus(welcome.started ? 'rejoining: loading the match from the other players' : 'match started');
  }

  const matchState = () => (match ? JSON.parse(match.stateJson()) : null);

  // Leaves the seat and takes it back: the match goes on without this tab
  // meanwhile, and the rejoin brings it back at a tick all players agree on.
  function rejoin() {
    const slot = welcome.slot;
    loop.stop();
    if (match) {
      match.close();
      match.free();
      match = null;
    }
    for (const s of [...links.keys()]) closeLink(s);
    const old = ws;
    ws = null;
    rejoins += 1;
    welcome = null;
    rejoinSlot = slot;
    joinTries = 0;
    // Join again once the server has freed the seat: after the old
    // connection's close (the server closes it on `leave`), or after 1 s.
    let joined = false;
    const again = () => {
      if (!joined) join(code, slot);
      joined = true;
    };
    if (old && old.readyState === WebSocket.OPEN) {
      old.addEventListener('close', again);
      old.send(JSON.stringify({ t: 'leave' }));
      setTimeout(again, 1000);
    } else {
      if (old) old.close();
      again();
    }
  }

  function frame(ms) {
    if (!match) return 0;
    // Away longer than the others wait for a silent player (rAF stops in a
    // hidden or frozen tab): they have declared this seat gone, so take it
    // back through the room. A shorter gap is not run tick by tick: the
    // clock re-anchors and the session's time sync evens out the rest.
    const s0 = lastFrameMs === null ? null : ms - lastFrameMs;
    lastFrameMs = ms;
    if (s0 !== null && s0 > 250) {
      const st = matchState();
      const limitMs = (1000 * st.disconnectAfter) / st.tickHz;
      if (s0 > limitMs && !st.finished) {
        setStatus(`away ${Math.round(s0)} ms (over disconnectAfter): rejoining`);
        rejoin();
        return 0;
      }
      match.reanchor();
    }
    const steps = match.frameAt(ms) ?? 0;
    game.draw($('view').getContext('2d'), match, info, welcome.slot);
    maybeReadout(ms);
    return steps;
  }

  // --- Drawing the lobby and the counters --------------------------------------
  const counters = $('counters');
  const cells = rows.map(([label]) => {
    const tr = counters.appendChild(document.createElement('tr'));
    tr.appendChild(document.createElement('th')).textContent = label;
    return tr.appendChild(document.createElement('td'));
  });
  const peerCells = new Map();

  function render() {
    const s = matchState();
    $('create-card').hidden = Boolean(code);
    $('lobby').hidden = !code;
    $('match').hidden = !match;
    if (code) {
      const link = `${location.origin}${location.pathname}?room=${encodeURIComponent(code)}`;
      $('link').textContent = link;
      $('link').href = link;
    }
    $('me').textContent = welcome ? String(welcome.slot) : '-';
    $('server-ping').textContent = serverPingMs === null ? '-' : String(serverPingMs);
    $('ready').disabled = !welcome || started;
    const tbody = $('members');
    tbody.textContent = '';
    for (const slot of [...members.keys()].sort((a, b) => a - b)) {
      const m = members.get(slot);
      const tr = tbody.appendChild(document.createElement('tr'));
      const mine = welcome && slot === welcome.slot;
      const l = links.get(slot);
      const p = s && s.connection.peers.find((x) => x.slot === slot);
      const path = mine ? 'you' : p ? p.path : l && l.open && !relayOnly ? 'direct' : 'relay';
      const ping = mine ? '-' : s && s.rttTicks[slot] ? `${Math.round((1000 * s.rttTicks[slot]) / s.tickHz)}` : l && l.pingMs !== null ? String(l.pingMs) : '-';
      for (const v of [`${slot}${mine ? ' (you)' : ''}`, m.role, m.ready || started ? 'yes' : 'no', path, ping]) {
        tr.appendChild(document.createElement('td')).textContent = v;
      }
      tr.dataset.slot = String(slot);
      tr.dataset.path = path;
      peerCells.set(slot, tr);
    }
    if (s) rows.forEach(([, f], i) => { cells[i].textContent = String(f(s)); });
    if (s && s.finished) setStatus(`match over at tick ${s.confirmedTick}: checksum ${s.confirmedChecksum}, ${s.desyncs} desyncs`);
    if (s && s.error) setStatus(`rejoin failed: ${s.error}`, true);
    return s;
  }
  const maybeReadout = throttledReadout(250, render);

  wireKeys(globalThis, {
    key: (c, d, ms) => (match ? match.key(c, d, ms) : false),
    releaseAll: (ms) => match && match.releaseAll(ms),
  });
  wireVisibility(document, (hidden, ms) => {
    if (!match) return;
    if (hidden) match.releaseAll(ms);
  });

  const api = {
    state: () => ({
      players: null, slot: null, confirmedTick: null, confirmedChecksum: null, desyncs: null, connection: null,
      ...(matchState() ?? {}),
      lobby: {
        code, slot: welcome ? welcome.slot : null, serverPingMs, started, rejoins,
        members: [...members].map(([slot, m]) => ({ slot, ...m, channel: links.get(slot)?.open ?? false })),
      },
    }),
    replay: () => {
      if (!match) throw new Error('no match yet');
      return match.replay();
    },
    downloadReplay: () => {
      const s = matchState();
      return downloadBase64(match.replay(), `room-${code}-${s.confirmedTick}.twr`);
    },
    create: (opts) => create(opts),
    ready: () => ready(),
    rejoin: () => rejoin(),
  };
  $('create').addEventListener('click', () => create().catch((e) => setStatus(e.message, true)));
  $('ready').addEventListener('click', () => ready());
  $('download').addEventListener('click', () => api.downloadReplay());
  globalThis.__tickwiseNet = api;

  if (code) join(code);
  else if (params.get('create') === '1') {
    await create({
      players: params.get('players') ?? 2,
      ticks: params.get('ticks') ?? Math.round(60 * RoomMatch.ticksPerSecond()),
      disconnectAfter: params.get('disconnectAfter') ?? undefined,
    });
  } else setStatus('create a room, or open a room link');
  render();
  document.documentElement.dataset.ready = 'true';
  return api;
}
