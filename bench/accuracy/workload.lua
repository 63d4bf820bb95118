-- bench/accuracy/workload.lua - an everyday Lua program for bench/accuracy.sh:
-- word counts over generated text, sorting records, string building and a
-- small numeric kernel. Argument: rounds (default 2).
local rounds = tonumber(arg[1]) or 2
local words = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi" }

local function text(n, seed)
  local parts, x = {}, seed
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    parts[i] = words[x % #words + 1]
  end
  return table.concat(parts, " ")
end

local function count(s)
  local c = {}
  for w in s:gmatch("%a+") do c[w] = (c[w] or 0) + 1 end
  return c
end

local function records(n)
  local r = {}
  for i = 1, n do r[i] = { id = i, key = (i * 7919) % 1000, name = "r" .. i } end
  table.sort(r, function(a, b) if a.key ~= b.key then return a.key < b.key end return a.id < b.id end)
  return r
end

local function nbody(steps)
  local x, v = { 0.0, 1.0, 2.0 }, { 0.5, -0.25, 0.125 }
  for _ = 1, steps do
    for i = 1, 3 do
      local f = 0.0
      for j = 1, 3 do if i ~= j then f = f + (x[j] - x[i]) * 0.001 end end
      v[i] = v[i] + f
      x[i] = x[i] + v[i] * 0.01
    end
  end
  return x[1] + x[2] + x[3]
end

local total = 0
for r = 1, rounds do
  local c = count(text(60000, r))
  for _, n in pairs(c) do total = total + n end
  local rs = records(20000)
  total = total + rs[1].id
  local buf = {}
  for i = 1, 20000 do buf[#buf + 1] = string.format("%d:%s", i, rs[i].name) end
  total = total + #table.concat(buf, ",")
  total = total + math.floor(nbody(20000))
end
print(total)
