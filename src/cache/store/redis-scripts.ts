// The Lua scripts of the Redis cache store (redis.ts). Each runs atomically in Redis, so the indexes
// (variants per key, keys for prefix purges, tags, LRU order, the byte count) never disagree between
// instances. Every key is derived from the base B; user-controlled strings (URLs, tags) only appear as
// members or as input to redis.sha1hex, never as a pattern, so no URL can name another key.
// ARGV[1] = B, ARGV[2] = the origin id of the instance (skipped by its own pub/sub handler).

const PRELUDE = `
local B, ORIGIN = ARGV[1], ARGV[2]
local function h(s) return redis.sha1hex(s) end
local function size() return tonumber(redis.call('GET', B..':size') or '0') end
local function touch(id)
  if redis.call('ZSCORE', B..':lru', id) then redis.call('ZADD', B..':lru', redis.call('INCR', B..':seq'), id) end
end
local function publish(msg) msg.o = ORIGIN; redis.call('PUBLISH', B..':inval', cjson.encode(msg)) end
-- Removes an entry and its index records; returns its primary key, or false when it was not indexed.
local function unindex(id)
  redis.call('DEL', B..':e:'..id)
  redis.call('ZREM', B..':lru', id)
  redis.call('ZREM', B..':disc', id)
  local ix = redis.call('HGET', B..':ix', id)
  if not ix then return false end
  local x = cjson.decode(ix)
  redis.call('HDEL', B..':ix', id)
  local vk = B..':v:'..h(x.k)
  if redis.call('HGET', vk, x.v) == id then redis.call('HDEL', vk, x.v) end
  if redis.call('EXISTS', vk) == 0 then redis.call('ZREM', B..':keys', x.k) end
  for _, t in ipairs(x.t) do redis.call('SREM', B..':t:'..h(t), id) end
  redis.call('DECRBY', B..':size', x.s)
  return x.k
end
`;

/**
 * ARGV: key, nowMs, inlineBytes. Returns [size, id, meta, body or nil, bodyBytes, ...]; a lookup counts
 * as a use. Bodies come inline when the key has one variant or all of them together are at most
 * inlineBytes: many large variants of one URL never make a lookup read them all.
 */
export const GET_SCRIPT = `${PRELUDE}
local key, now, inline = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local live, total = {}, 0
for _, id in ipairs(redis.call('HVALS', B..':v:'..h(key))) do
  local d = redis.call('ZSCORE', B..':disc', id)
  local m = redis.call('HGET', B..':e:'..id, 'm')
  if (not m) or (d and now > tonumber(d)) then unindex(id)
  else
    local n = redis.call('HSTRLEN', B..':e:'..id, 'b')
    total = total + n
    live[#live + 1] = {id, m, n}
  end
end
local withBodies = #live == 1 or total <= inline
local out = {size()}
for _, v in ipairs(live) do
  touch(v[1])
  out[#out + 1] = v[1]; out[#out + 1] = v[2]
  out[#out + 1] = withBodies and redis.call('HGET', B..':e:'..v[1], 'b') or false
  out[#out + 1] = v[3]
end
return out
`;

/**
 * ARGV: key, id, varyKey, meta, sizeBytes, ttlMs (0: none), discardAfterMs ('' none), maxSizeBytes,
 * maxVariants, ix (JSON {k, v, t, s}), body, touch count, touched ids... Returns [size] or [-1] when it
 * cannot fit.
 */
export const PUT_SCRIPT = `${PRELUDE}
local key, id, vkey, meta, sz = ARGV[3], ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
local ttl, disc, maxSize, maxVar = tonumber(ARGV[8]), ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11])
local ixj, body, nt = ARGV[12], ARGV[13], tonumber(ARGV[14])
for i = 1, nt do touch(ARGV[14 + i]) end
local x = cjson.decode(ixj)
local vk = B..':v:'..h(key)
local keys = {key}
local old = redis.call('HGET', vk, vkey)
if old then unindex(old); redis.call('HDEL', vk, vkey) end
-- RFC 9111 4.1 variants beyond the cap: the least recently used of the key goes.
while redis.call('HLEN', vk) >= maxVar do
  local all = redis.call('HGETALL', vk)
  local bestF, bestId, bestScore = nil, nil, nil
  for i = 1, #all, 2 do
    local sc = tonumber(redis.call('ZSCORE', B..':lru', all[i + 1]) or '0')
    if bestScore == nil or sc < bestScore then bestF, bestId, bestScore = all[i], all[i + 1], sc end
  end
  unindex(bestId); redis.call('HDEL', vk, bestF)
end
while size() + sz > maxSize do
  local oldest = redis.call('ZRANGE', B..':lru', 0, 0)[1]
  if not oldest then break end
  local k = unindex(oldest)
  if k then keys[#keys + 1] = k end
end
if size() + sz > maxSize then return {-1} end
local e = B..':e:'..id
redis.call('HSET', e, 'k', key, 'm', meta, 'b', body)
if ttl > 0 then redis.call('PEXPIRE', e, ttl) end
redis.call('HSET', B..':ix', id, ixj)
redis.call('HSET', vk, vkey, id)
redis.call('ZADD', B..':keys', 0, key)
redis.call('ZADD', B..':lru', redis.call('INCR', B..':seq'), id)
if disc ~= '' then redis.call('ZADD', B..':disc', disc, id) end
for _, t in ipairs(x.t) do redis.call('SADD', B..':t:'..h(t), id) end
redis.call('INCRBY', B..':size', sz)
publish({k = keys})
return {size()}
`;

/**
 * ARGV: key, id, meta, sizeBytes without the body, ttlMs, discardAfterMs, maxSizeBytes, ix (its `s`
 * without the body too). Returns [size, bodyBytes] or [size] when the entry is gone.
 */
export const UPDATE_SCRIPT = `${PRELUDE}
local key, id, meta, sz = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local ttl, disc, maxSize, ixj = tonumber(ARGV[7]), ARGV[8], tonumber(ARGV[9]), ARGV[10]
local cur = redis.call('HGET', B..':ix', id)
if not cur then return {size()} end
local x = cjson.decode(cur)
if x.k ~= key then return {size()} end
local e = B..':e:'..id
if redis.call('EXISTS', e) == 0 then unindex(id); return {size()} end
local bl = redis.call('HSTRLEN', e, 'b')
sz = sz + bl
if sz > maxSize then unindex(id); publish({k = {key}}); return {size()} end
for _, t in ipairs(x.t) do redis.call('SREM', B..':t:'..h(t), id) end
local nx = cjson.decode(ixj)
nx.s = sz
for _, t in ipairs(nx.t) do redis.call('SADD', B..':t:'..h(t), id) end
redis.call('HSET', e, 'm', meta)
if ttl > 0 then redis.call('PEXPIRE', e, ttl) else redis.call('PERSIST', e) end
redis.call('ZREM', B..':disc', id)
if disc ~= '' then redis.call('ZADD', B..':disc', disc, id) end
redis.call('HSET', B..':ix', id, cjson.encode(nx))
redis.call('INCRBY', B..':size', sz - x.s)
publish({k = {key}})
return {size(), bl}
`;

/** ARGV: key, id ('' for every variant: an invalidation, RFC 9111 §4.4). Returns [size, removed]. */
export const DELETE_SCRIPT = `${PRELUDE}
local key, id = ARGV[3], ARGV[4]
local vk = B..':v:'..h(key)
local n = 0
if id ~= '' then
  local cur = redis.call('HGET', B..':ix', id)
  if cur and cjson.decode(cur).k == key then unindex(id); n = 1 end
  publish({k = {key}})
else
  for _, v in ipairs(redis.call('HVALS', vk)) do if unindex(v) then n = n + 1 end end
  redis.call('DEL', vk); redis.call('ZREM', B..':keys', key)
  publish({k = {key}, i = 1})
end
return {size(), n}
`;

/** ARGV: kind ('tag' | 'prefix' | 'all'), value. Returns [size, removed]. */
export const PURGE_SCRIPT = `${PRELUDE}
local kind, value = ARGV[3], ARGV[4]
local ids = {}
if kind == 'tag' then
  ids = redis.call('SMEMBERS', B..':t:'..h(value))
elseif kind == 'prefix' then
  -- A lexicographic range, not a pattern: '*', '?' or '[' in a URL are plain bytes (0xff never occurs in UTF-8).
  local lo, hi = '[' .. value, '(' .. value .. string.char(255)
  if value == '' then lo, hi = '-', '+' end
  for _, k in ipairs(redis.call('ZRANGEBYLEX', B..':keys', lo, hi)) do
    for _, v in ipairs(redis.call('HVALS', B..':v:'..h(k))) do ids[#ids + 1] = v end
  end
else
  ids = redis.call('HKEYS', B..':ix')
end
local keys, n = {}, 0
for _, id in ipairs(ids) do
  local k = unindex(id)
  if k then n = n + 1; keys[#keys + 1] = k end
end
if kind == 'all' then publish({a = 1, i = 1})
elseif kind == 'tag' then publish({k = keys, i = 1, tag = value})
else publish({k = keys, i = 1, prefix = value}) end
return {size(), n}
`;

/** ARGV: nowMs. Drops entries past discardAfterMs. Returns [size, removed]. */
export const PRUNE_SCRIPT = `${PRELUDE}
local n = 0
for _, id in ipairs(redis.call('ZRANGEBYSCORE', B..':disc', '-inf', '(' .. ARGV[3])) do
  if unindex(id) then n = n + 1 end
end
return {size(), n}
`;

/** ARGV: ids used from the memory tier. Returns [size]. */
export const TOUCH_SCRIPT = `${PRELUDE}
for i = 3, #ARGV do touch(ARGV[i]) end
return {size()}
`;
