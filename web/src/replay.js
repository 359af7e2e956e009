// Saving a page's replay: the bytes of `replay()` (base64 from Rust) as a
// file download. A Blob URL works from a server and from file:// alike, and
// needs no permission; the file is what `tickwise verify` reads.

/** The bytes of a base64 string (what `replay()` returns). */
export function base64Bytes(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}

/**
 * Offers `b64`'s bytes as a download named `name` (e.g. island-1234.twr).
 * @returns {string} the file name
 */
export function downloadBase64(b64, name) {
  const blob = new Blob([base64Bytes(b64)], { type: 'application/octet-stream' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The download has its own reference to the Blob once started.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

/** The speeds a page's selector offers, as [p, q] pairs and labels. */
export const SPEEDS = [[1, 4, '¼×'], [1, 2, '½×'], [1, 1, '1×'], [2, 1, '2×'], [4, 1, '4×']];
