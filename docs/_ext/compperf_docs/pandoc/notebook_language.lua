-- A pandoc filter for notebooks in another language than English, run after
-- notebook_markdown.lua.
--
-- * A translated example wraps its prose at 79 columns and may break a line between two
--   CJK characters. reST joins the lines of a paragraph with a space, which in Chinese is
--   a stray gap in the middle of a sentence: the line break (a SoftBreak) goes when the
--   characters on both sides of it are wide, or after CJK punctuation. Elsewhere
--   nothing changes.
-- * notebook_markdown.lua titles admonitions in English ("**Note:**"); the metadata
--   "compperf-labels" (English label -> the language's, from Sphinx's own catalogs)
--   gives their titles in the notebook's language.

local function wide(code)
  return (code >= 0x1100 and code <= 0x115F) or (code >= 0x2E80 and code <= 0xA4CF)
      or (code >= 0xAC00 and code <= 0xD7A3) or (code >= 0xF900 and code <= 0xFAFF)
      or (code >= 0xFE30 and code <= 0xFE4F) or (code >= 0xFF00 and code <= 0xFF60)
      or (code >= 0xFFE0 and code <= 0xFFE6) or (code >= 0x20000 and code <= 0x3FFFF)
end

-- CJK punctuation (。，、；： and the like): a line may break after it without a space.
local function punctuation(code)
  return (code >= 0x3000 and code <= 0x303F) or (code >= 0xFF01 and code <= 0xFF0F)
      or (code >= 0xFF1A and code <= 0xFF20) or (code >= 0xFF3B and code <= 0xFF40)
      or (code >= 0xFF5B and code <= 0xFF65)
end

local function last_code(inline)
  if inline.t ~= "Str" or inline.text == "" then return nil end
  local code
  for _, c in utf8.codes(inline.text) do code = c end
  return code
end

local function first_code(inline)
  if inline.t ~= "Str" or inline.text == "" then return nil end
  return utf8.codepoint(inline.text, 1)
end

local labels = {}

local function read_labels(meta)
  local value = meta["compperf-labels"]
  labels = value and pandoc.json.decode(pandoc.utils.stringify(value), false) or {}
  meta["compperf-labels"] = nil
  return meta
end

local function translate_title(quote)
  local first = quote.content[1]
  if first and first.t == "Para" and first.content[1] and first.content[1].t == "Strong" then
    local name = pandoc.utils.stringify(first.content[1]):match("^(.-):$")
    if name and labels[name] then
      first.content[1] = pandoc.Strong(pandoc.Inlines(labels[name] .. ":"))
      return quote
    end
  end
end

local function join_wide_lines(inlines)
  for i = #inlines - 1, 2, -1 do
    if inlines[i].t == "SoftBreak" then
      local before, after = last_code(inlines[i - 1]), first_code(inlines[i + 1])
      if before and wide(before) and ((after and wide(after)) or punctuation(before)) then
        inlines:remove(i)
      end
    end
  end
  return inlines
end

-- The metadata first: pandoc would otherwise visit Meta after the blocks.
return { { Meta = read_labels }, { Inlines = join_wide_lines, BlockQuote = translate_title } }
