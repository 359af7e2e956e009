local n = (#KEYS - 4) / 2
local out = {}
local fresh, size, work = 0, 0, 0
for i = 1, n do
  local r = redis.call('GET', KEYS[2 * i + 3])
  if r then
    out[i] = {'done', r}
  else
    local s = redis.call('HGET', KEYS[2 * i + 4], 'status')
    if s then
      out[i] = {'dup', s, redis.call('HGET', KEYS[2 * i + 4], 'attempts') or '0'}
    else
      out[i] = false
      fresh = fresh + 1
      size = size + string.len(ARGV[3 * i + 4])
      work = work + tonumber(ARGV[3 * i + 5])
    end
  end
end
if fresh == 0 then return out end
local depth = redis.call('XLEN', KEYS[1]) + redis.call('XLEN', KEYS[4])
if depth + fresh > tonumber(ARGV[1]) then return {{'full', tostring(depth)}} end
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
if held > 0 and held + size > tonumber(ARGV[3]) then return {{'bytes', tostring(held)}} end
local had = tonumber(redis.call('GET', KEYS[3]) or '0')
if (had > 0 or fresh > 1) and had + work > tonumber(ARGV[4]) then return {{'client', tostring(had), tostring(work)}} end
for i = 1, n do
  if not out[i] then
    local len = string.len(ARGV[3 * i + 4])
    redis.call('HSET', KEYS[2 * i + 4], 'status', 'queued', 'attempts', '0', 'size', len, 'work', ARGV[3 * i + 5], 'client', KEYS[3])
    redis.call('INCRBY', KEYS[2], len)
    redis.call('INCRBY', KEYS[3], ARGV[3 * i + 5])
    local lane = KEYS[1]
    if tonumber(ARGV[3 * i + 5]) > tonumber(ARGV[5]) then lane = KEYS[4] end
    redis.call('XADD', lane, '*', 'id', ARGV[3 * i + 3], 'meta', ARGV[2], 'bytes', ARGV[3 * i + 4])
    out[i] = {'queued'}
  end
end
return out
