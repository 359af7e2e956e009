local out = {}
for i = 1, #KEYS / 2 do
  local r = redis.call('GET', KEYS[2 * i - 1])
  if r then
    out[i] = {'done', r}
  else
    local s = redis.call('HGET', KEYS[2 * i], 'status')
    if s then
      out[i] = {'open', s, redis.call('HGET', KEYS[2 * i], 'attempts') or '0'}
    else
      out[i] = {'none'}
    end
  end
end
return out
