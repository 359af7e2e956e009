local r = redis.call('GET', KEYS[1])
if r then return {'done', r} end
local s = redis.call('HGET', KEYS[2], 'status')
if s then return {'open', s, redis.call('HGET', KEYS[2], 'attempts') or '0'} end
return {'none'}
