/**
 * mulberry32: a small seeded generator of numbers in [0, 1), so that a test's generated data, or a bench's questions,
 * are the same on every run and a failure replays exactly (Math.random cannot be seeded).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
