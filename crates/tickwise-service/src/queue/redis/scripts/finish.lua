local stored = 0
for i = 1, (#KEYS - 2) / 2 do
  local a = 3 + (i - 1) * 7
  local set = redis.call('SET', KEYS[2 * i + 1], ARGV[a + 1], 'NX')
  if set then
    stored = stored + 1
    redis.call('HINCRBY', KEYS[2], ARGV[a + 3], 1)
    redis.call('HINCRBY', KEYS[2], 'ticks', ARGV[a + 4])
    redis.call('HINCRBY', KEYS[2], 'verify_nanos', ARGV[a + 5])
    redis.call('HINCRBY', KEYS[2], ARGV[a + 6], 1)
    redis.call('HINCRBY', KEYS[2], 'latency_sum_ms', ARGV[a + 7])
  else
    redis.call('HINCRBY', KEYS[2], 'duplicate_verdicts', 1)
  end
  local job = redis.call('HMGET', KEYS[2 * i + 2], 'size', 'work', 'client')
  if job[1] then
    if redis.call('DECRBY', ARGV[3], job[1]) <= 0 then redis.call('DEL', ARGV[3]) end
  end
  if job[2] and job[3] then
    if redis.call('DECRBY', job[3], job[2]) <= 0 then redis.call('DEL', job[3]) end
  end
  redis.call('DEL', KEYS[2 * i + 2])
  if ARGV[a + 2] ~= '' then
    redis.call('XACK', KEYS[1], ARGV[1], ARGV[a + 2])
    redis.call('XDEL', KEYS[1], ARGV[a + 2])
  end
end
redis.call('PUBLISH', ARGV[2], stored)
return stored
