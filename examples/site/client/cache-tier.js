/**
 * What an entry costs the heap beyond its text and body bytes (V8, 64-bit), measured by
 * test/client/memory-accounting.test.ts (heap freed by clear() over 20,000 tiny entries): the key's
 * Map slot, holder object and variants array; each response object with its two header maps and its
 * Uint8Array with ArrayBuffer; each header field's property slot and string headers.
 */
const KEY_OVERHEAD_BYTES = 160;
const VARIANT_OVERHEAD_BYTES = 256;
const FIELD_OVERHEAD_BYTES = 48;
/** Bytes one URL's variants cost in memory: bodies, header text and the per-object overheads above. */
export function variantsBytes(key, variants) {
    let n = key.length + KEY_OVERHEAD_BYTES;
    for (const v of variants) {
        n += v.body.byteLength + v.statusText.length + VARIANT_OVERHEAD_BYTES;
        for (const [k, val] of Object.entries(v.headers))
            n += k.length + val.length + FIELD_OVERHEAD_BYTES;
        for (const [k, val] of Object.entries(v.requestHeaders))
            n += k.length + val.length + FIELD_OVERHEAD_BYTES;
    }
    return n;
}
export function memoryTier(maxBytes) {
    if (!(Number.isFinite(maxBytes) && maxBytes >= 0))
        throw new RangeError('maxMemoryBytes: a number >= 0');
    const map = new Map();
    let total = 0;
    const remove = (key) => {
        const e = map.get(key);
        if (e === undefined)
            return;
        total -= e.bytes;
        map.delete(key);
    };
    return {
        name: 'memory',
        maxBytes,
        get(key) {
            const e = map.get(key);
            if (e === undefined)
                return undefined;
            map.delete(key);
            map.set(key, e);
            return e.variants;
        },
        put(key, variants) {
            remove(key);
            const bytes = variantsBytes(key, variants);
            if (bytes > maxBytes)
                return;
            map.set(key, { variants, bytes });
            total += bytes;
            for (const oldest of map.keys()) {
                if (total <= maxBytes)
                    break;
                remove(oldest);
            }
        },
        delete: remove,
        keys: () => [...map.keys()],
        clear() {
            map.clear();
            total = 0;
        },
        sizeBytes: () => total,
    };
}
