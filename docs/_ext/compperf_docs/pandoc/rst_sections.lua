-- A pandoc reader: reStructuredText whose section levels follow the adornment character.
--
-- sphinx-gallery converts each text block of an example on its own, and pandoc numbers
-- section levels by the order in which a document uses its adornments, so every block
-- would start at level 1 ("Summary" as large as the page title). This reader keeps
-- pandoc's rst reader and then gives each section the level its underline means in the
-- gallery (the Python documentation's convention): "=" 1, "-" 2, "~" 3, "^" 4, '"' 5;
-- an overlined title is level 1. Sections with another adornment keep pandoc's level.

local LEVELS = { ["="] = 1, ["-"] = 2, ["~"] = 3, ["^"] = 4, ['"'] = 5 }

-- The punctuation character that a line repeats (three times at least), or nil.
local function adornment(line)
  local char = line:match("^(%p)%p%p")
  if char and line:match("^%" .. char .. "+%s*$") then
    return char
  end
  return nil
end

-- The adornment of each section title in the source, in order ("over" for overlined ones).
local function adornments(text)
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    lines[#lines + 1] = line
  end
  local found = {}
  local i = 1
  while i < #lines do
    local title, under = lines[i], lines[i + 1]
    local char = adornment(under)
    if char and title:match("%S") and not adornment(title) and not title:match("^%s") then
      local over = i > 1 and adornment(lines[i - 1])
      found[#found + 1] = over and "over" or char
      i = i + 2
    else
      i = i + 1
    end
  end
  return found
end

function Reader(input, options)
  local text = tostring(input)
  local doc = pandoc.read(text, "rst", options)
  local marks = adornments(text)
  local headers = 0
  doc.blocks:walk({ Header = function(h) headers = headers + 1 end })
  if headers ~= #marks then
    return doc -- the source is not what this reader understands: pandoc's levels stand
  end
  local n = 0
  return doc:walk({
    Header = function(h)
      n = n + 1
      local mark = marks[n]
      local level = mark == "over" and 1 or LEVELS[mark]
      if level then
        h.level = level
      end
      return h
    end,
  })
end
