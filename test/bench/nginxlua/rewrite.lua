-- rewrite.lua: the benchmark's nginx + Lua peer (Debian's
-- libnginx-mod-http-lua and lua-cjson). It does signpost's job for the
-- benchmark's wrong call, and nothing more: on PATCH /tickets/{ticket_id}
-- the access phase reads the request body, as signpost does on a route with
-- body fields (up to client_body_buffer_size, 1 MiB, as signpost's
-- limits.request_body; a larger body is forwarded unread), and the header
-- and body filters turn the upstream's 400 {"error":"Invalid status"}
-- (test/bench/rules.yaml's rule invalid_status) into the body signpost
-- writes for it:
--
--   {"error":"invalid_status","field":"status","message":"allowed values: open, pending, closed","received":"OPEN","retryable":false}
--
-- received keeps the value's JSON type, a string cut at 64 characters with
-- signpost's "…[+N chars]" marker; did_you_mean follows signpost's order (an
-- alias in any case, then a value differing only in case, then edit
-- distance), and, as in signpost, a set short enough to be listed in the
-- message gets an alias only. The header filter runs before the body is
-- read, so a rewritten answer is sent chunked, without Content-Length. It
-- keeps no state per caller, counts nothing and logs nothing.
--
-- test/bench/run.sh loads it with lua_package_path and calls it from
-- access_by_lua_block, header_filter_by_lua_block and body_filter_by_lua_block.

local cjson = require "cjson.safe"

local M = {}

-- The route's one rule, as test/bench/rules.yaml declares it.
local values = { "open", "pending", "closed" }
local aliases = {} -- lower-cased alias -> value; the rules declare none
-- listed is signpost's decision for this set: its listing costs 10 tokens
-- of the default budget of 60, so the message lists it and did_you_mean
-- proposes an alias only.
local listed = true
local rule = "allowed values: " .. table.concat(values, ", ")

local max_received = 64 -- signpost's limits.received default, in characters
local max_error_body = 64 * 1024 -- signpost's limits.error_body default

local head = '{"error":"invalid_status","field":"status","message":' .. cjson.encode(rule)

-- quote returns s as a JSON string, cut after max_received characters.
local function quote(s)
	if #s > max_received then
		local n = select(2, s:gsub("[^\128-\191]", "")) -- characters: UTF-8 lead bytes
		if n > max_received then
			local i, c = 1, 0
			while c < max_received do
				local b = s:byte(i)
				i = i + (b < 0x80 and 1 or b < 0xE0 and 2 or b < 0xF0 and 3 or 4)
				c = c + 1
			end
			s = s:sub(1, i - 1) .. "…[+" .. (n - max_received) .. " chars]"
		end
	end
	return cjson.encode(s)
end

-- osa is the optimal-string-alignment distance between a and b, by bytes.
local function osa(a, b)
	local d = {}
	for i = 0, #a do
		d[i] = { [0] = i }
	end
	for j = 0, #b do
		d[0][j] = j
	end
	for i = 1, #a do
		for j = 1, #b do
			local cost = a:byte(i) == b:byte(j) and 0 or 1
			local v = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
			if i > 1 and j > 1 and a:byte(i) == b:byte(j - 1) and a:byte(i - 1) == b:byte(j) then
				v = math.min(v, d[i - 2][j - 2] + 1)
			end
			d[i][j] = v
		end
	end
	return d[#a][#b]
end

-- suggest returns up to three permitted values close to v, best first, or
-- nil: an alias in any case, a value differing only in case, then values
-- within an edit distance that grows with v's length, ties in declared
-- order. For a listed set, an alias only.
local function suggest(v)
	for _, p in ipairs(values) do
		if v == p then return nil end
	end
	local lower = v:lower()
	if aliases[lower] then return { aliases[lower] } end
	if listed then return nil end
	for _, p in ipairs(values) do
		if p:lower() == lower then return { p } end
	end
	local n = #lower
	if n <= 2 then return nil end
	local bound = n <= 5 and 1 or n <= 8 and 2 or 3
	local out = {}
	for dist = 1, bound do
		for _, p in ipairs(values) do
			if #out < 3 and osa(lower, p:lower()) == dist then out[#out + 1] = p end
		end
	end
	return #out > 0 and out or nil
end

-- body returns the rewritten answer for sent, the request's status: nil
-- when the request did not carry one.
function M.body(sent)
	local b = { head }
	if sent ~= nil then
		local raw
		if type(sent) == "string" then
			raw = quote(sent)
		else
			raw = cjson.encode(sent)
			if #raw > max_received then raw = quote(raw) end
		end
		b[#b + 1] = ',"received":'
		b[#b + 1] = raw
		if type(sent) == "string" then
			local d = suggest(sent)
			if d then
				b[#b + 1] = ',"did_you_mean":'
				b[#b + 1] = cjson.encode(d)
			end
		end
	end
	b[#b + 1] = ',"retryable":false}'
	return table.concat(b)
end

-- access reads the body of a call on the route and keeps its status.
function M.access()
	if ngx.req.get_method() ~= "PATCH" or not ngx.var.uri:find("^/tickets/[^/]+$") then
		return
	end
	ngx.req.read_body()
	local body = ngx.req.get_body_data() -- nil when none, or too large to keep in memory
	local ctx = ngx.ctx
	ctx.route = true
	if body then
		local doc = cjson.decode(body)
		if type(doc) == "table" then ctx.sent = doc.status end
	end
end

-- header_filter readies a 400 on the route for its body to be read.
function M.header_filter()
	local ctx = ngx.ctx
	if not ctx.route or ngx.status ~= 400 then return end
	local h = ngx.header
	if h.content_encoding or (tonumber(h.content_length) or 0) > max_error_body then return end
	ctx.chunks, ctx.size = {}, 0
	h.content_length = nil
	h.content_type = "application/json"
	h.etag = nil
	h.last_modified = nil
end

-- body_filter holds the 400's body back until its end, then sends the
-- rewritten body, or the upstream's when the rule does not match.
function M.body_filter()
	local ctx = ngx.ctx
	local chunks = ctx.chunks
	if not chunks then return end
	local chunk, eof = ngx.arg[1], ngx.arg[2]
	if chunk ~= "" then
		chunks[#chunks + 1] = chunk
		ctx.size = ctx.size + #chunk
	end
	if ctx.size > max_error_body then
		-- Too large to be the rule's error: pass on what was held.
		ngx.arg[1] = table.concat(chunks)
		ctx.chunks = nil
		return
	end
	if not eof then
		ngx.arg[1] = nil
		return
	end
	ctx.chunks = nil
	local up = table.concat(chunks)
	local doc = cjson.decode(up)
	if type(doc) == "table" and doc.error == "Invalid status" then
		ngx.arg[1] = M.body(ctx.sent)
	else
		ngx.arg[1] = up
	end
end

return M
