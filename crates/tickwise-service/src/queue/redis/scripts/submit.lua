local r = redis.call('GET', KEYS[1])
if r then return {'done', r} end
local s = redis.call('HGET', KEYS[2], 'status')
if s then return {'dup', s, redis.call('HGET', KEYS[2], 'attempts') or '0'} end
local depth = redis.call('XLEN', KEYS[3]) + redis.call('XLEN', KEYS[6])
if depth >= tonumber(ARGV[1]) then return {'full', tostring(depth)} end
local size = string.len(ARGV[4])
local held = tonumber(redis.call('GET', KEYS[4]) or '0')
if held > 0 and held + size > tonumber(ARGV[5]) then return {'bytes', tostring(held)} end
local work = tonumber(redis.call('GET', KEYS[5]) or '0')
if work > 0 and work + tonumber(ARGV[6]) > tonumber(ARGV[7]) then return {'client', tostring(work)} end
redis.call('HSET', KEYS[2], 'status', 'queued', 'attempts', '0', 'size', size, 'work', ARGV[6], 'client', KEYS[5])
redis.call('INCRBY', KEYS[4], size)
redis.call('INCRBY', KEYS[5], ARGV[6])
local lane = KEYS[3]
if tonumber(ARGV[6]) > tonumber(ARGV[8]) then lane = KEYS[6] end
redis.call('XADD', lane, '*', 'id', ARGV[2], 'meta', ARGV[3], 'bytes', ARGV[4])
return {'queued'}
