import { launch } from './browser.mjs';
const args = ['--disable-features=WebRtcHideLocalIpsWithMdns'];
const a = await launch({ args }); const b = await launch({ args });
try {
  for (const p of [a.page, b.page]) await p.goto('about:blank');
  const setup = (role) => {
    window.pc = new RTCPeerConnection({ iceServers: [] });
    window.cands = []; window.msgs = [];
    pc.onicecandidate = (e) => { if (e.candidate) cands.push(e.candidate.toJSON()); };
    const wire = (ch) => { window.ch = ch; ch.onmessage = (e) => msgs.push(e.data); };
    if (role === 'offer') wire(pc.createDataChannel('d', { ordered: false, maxRetransmits: 0 }));
    else pc.ondatachannel = (e) => wire(e.channel);
  };
  await a.page.evaluate(setup, 'offer'); await b.page.evaluate(setup, 'answer');
  const t0 = Date.now();
  const offer = await a.page.evaluate(async () => { const o = await pc.createOffer(); await pc.setLocalDescription(o); return o; });
  const answer = await b.page.evaluate(async (o) => { await pc.setRemoteDescription(o); const a = await pc.createAnswer(); await pc.setLocalDescription(a); return a; }, offer);
  await a.page.evaluate(async (x) => pc.setRemoteDescription(x), answer);
  await new Promise((r) => setTimeout(r, 500));
  const ca = await a.page.evaluate(() => cands); const cb = await b.page.evaluate(() => cands);
  console.log('candidates', JSON.stringify(ca.map(c=>c.candidate)), JSON.stringify(cb.map(c=>c.candidate)));
  await b.page.evaluate(async (cs) => { for (const c of cs) await pc.addIceCandidate(c); }, ca);
  await a.page.evaluate(async (cs) => { for (const c of cs) await pc.addIceCandidate(c); }, cb);
  await a.page.waitForFunction(() => window.ch && ch.readyState === 'open', null, { timeout: 10000 });
  await a.page.evaluate(() => ch.send('hello'));
  await b.page.waitForFunction(() => msgs.length > 0, null, { timeout: 10000 });
  console.log('open+message in', Date.now() - t0, 'ms', await b.page.evaluate(() => msgs));
} finally { await a.close(); await b.close(); }
