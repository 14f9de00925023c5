"""The Lua scripts of the shared crawl: what the Redis Stream cannot do atomically alone.

- `FIRST_SCRIPT`: the first discovery of a URL (`seen` + `untold`, one step);
- `CLAIM_PUSH_SCRIPT`: claim, page budget and queueing in one step, so a worker dying in
  between cannot lose the URL (`PUSH_SCRIPT`: queueing alone, a task given back);
- `IDLE_SCRIPT`: the end-of-crawl rule: nothing pending for a quiet period, measured on
  the server clock.

The plans of `docscrawl.distributed.streams` run them (keys and arguments named above
each). No Redis import here.
"""

# KEYS: seen untold   ARGV: url
FIRST_SCRIPT = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

_NOW = """
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
"""

# KEYS: tasks state stats
_PUSH_FN = """
local function push(body)
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('XGROUP', 'CREATE', KEYS[1], 'workers', '0', 'MKSTREAM')
  end
  local id = redis.call('XADD', KEYS[1], '*', 'task', body)
  redis.call('HSETNX', KEYS[2], 'started', tostring(now()))
  redis.call('HDEL', KEYS[2], 'idle_since', 'finished')
  redis.call('HINCRBY', KEYS[3], 'pushed', 1)
  return id
end
"""

PUSH_SCRIPT = _NOW + _PUSH_FN + "return push(ARGV[1])"

# KEYS: tasks state stats claims
# ARGV: normalized owner body max_pages ('' = none) counts ('1' = takes a page slot)
CLAIM_PUSH_SCRIPT = _NOW + _PUSH_FN + """
local owner = redis.call('HGET', KEYS[4], ARGV[1])
if owner then return {'duplicate', owner} end
if ARGV[4] ~= '' and ARGV[5] == '1' then
  local admitted = tonumber(redis.call('HGET', KEYS[3], 'admitted') or '0')
  if admitted >= tonumber(ARGV[4]) then return {'max_pages', ''} end
end
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[3], 'admitted', 1) end
return {'queued', push(ARGV[3])}
"""

# KEYS: tasks state   ARGV: quiet_seconds
IDLE_SCRIPT = _NOW + """
if redis.call('HEXISTS', KEYS[2], 'finished') == 1 then return 1 end
if redis.call('HEXISTS', KEYS[2], 'started') == 0 then return 0 end
if redis.call('XLEN', KEYS[1]) > 0 then
  redis.call('HDEL', KEYS[2], 'idle_since')
  return 0
end
local t = now()
local since = tonumber(redis.call('HGET', KEYS[2], 'idle_since') or '')
if not since then
  redis.call('HSET', KEYS[2], 'idle_since', tostring(t))
  since = t
end
if t - since >= tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[2], 'finished', tostring(t))
  return 1
end
return 0
"""
