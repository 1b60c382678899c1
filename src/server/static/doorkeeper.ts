// Admission on second use for the file view: a path becomes a cache entry only when it was
// asked for before, as nginx's `open_file_cache_min_uses 2` or TinyLFU's doorkeeper. A crawl of 100,000
// files served once each then never fills the view with entries that are evicted unused, whose garbage
// (not the live set, which memoryCacheBytes bounds) grew the RSS by three times the bound.
// A fixed bitset of path hashes: one 32-bit FNV-1a hash per path, cleared when a quarter of its bits are
// set, so a new path passes for a seen one (and is kept at once) at most a quarter of the time.

/** Bits in the set: 128 KiB, about 262,000 distinct paths between clearings. */
export const DOORKEEPER_BITS = 1 << 20;

export class Doorkeeper {
  private readonly words: Uint32Array;
  private readonly mask: number;
  private readonly limit: number;
  private setBits = 0;

  /** `bits`: a power of two, at least 32. */
  constructor(bits: number = DOORKEEPER_BITS) {
    if (bits < 32 || (bits & (bits - 1)) !== 0) throw new RangeError(`doorkeeper bits: ${bits}`);
    this.words = new Uint32Array(bits >>> 5);
    this.mask = bits - 1;
    this.limit = bits >>> 2;
  }

  /** Whether `key` was seen since the last clearing; marks it seen. */
  seenBefore(key: string): boolean {
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    const bitIndex = (h >>> 0) & this.mask;
    const word = bitIndex >>> 5;
    const bit = 1 << (bitIndex & 31);
    const w = this.words[word]!;
    if ((w & bit) !== 0) return true;
    this.words[word] = w | bit;
    if (++this.setBits >= this.limit) this.clear();
    return false;
  }

  clear(): void {
    this.words.fill(0);
    this.setBits = 0;
  }
}
