/** Approximate bytes of one URL's variants: bodies plus header text (UTF-16 length, good enough). */
export function variantsBytes(key, variants) {
    let n = key.length;
    for (const v of variants) {
        n += v.body.byteLength + 64;
        for (const [k, val] of Object.entries(v.headers))
            n += k.length + val.length;
        for (const [k, val] of Object.entries(v.requestHeaders))
            n += k.length + val.length;
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
