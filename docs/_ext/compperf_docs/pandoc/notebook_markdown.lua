-- A pandoc filter: reStructuredText that Sphinx understands, as Markdown that Jupyter shows.
--
-- pandoc's rst reader keeps Sphinx roles as code marked "interpreted-text", Sphinx
-- substitutions as links to "##SUBST##|name|", and admonitions as divs; Markdown
-- writers would print them as attributes, broken links and fenced divs that Jupyter
-- shows verbatim. This filter turns
--   * roles into code spans (:func:`~torch.compile` -> `compile`), or into links to the
--     published site where compperf_docs knows the target (:ref:, absolute :doc:),
--     with the target's title as Sphinx shows it; other :ref: and :doc: become words;
--   * substitutions into their value from the metadata (release, version);
--   * admonitions into quotes with a bold title, and "dropdown" ones into <details>.
-- The metadata comes from compperf_docs.notebook_markdown.pandoc_options.

local stringify = pandoc.utils.stringify

local links = {}   -- Sphinx label, or "/" .. page name -> {absolute URL, title}
local values = {}  -- substitution name -> text

-- Roles that name something to read as words rather than as code.
local PROSE_ROLES = { ref = true, doc = true, term = true, abbr = true, guilabel = true,
                      menuselection = true, numref = true }

local ADMONITIONS = { attention = "Attention", caution = "Caution", danger = "Danger",
                      error = "Error", hint = "Hint", important = "Important",
                      note = "Note", tip = "Tip", warning = "Warning",
                      seealso = "See also", admonition = "" }

-- Each value is a JSON object given on the command line (-M name=JSON).
local function json_table(meta, name)
  local value = meta[name]
  return value and pandoc.json.decode(stringify(value), false) or {}
end

function Meta(meta)
  links = json_table(meta, "compperf-links")
  values = json_table(meta, "compperf-substitutions")
  meta["compperf-links"], meta["compperf-substitutions"] = nil, nil
  return meta
end

-- "title <target>" -> title, target; "~a.b.c" -> "c", "a.b.c"; "a" -> "a", "a".
local function split_role_text(text)
  local title, target = text:match("^(.-)%s*<([^<>]+)>$")
  if title and title ~= "" then
    return title, target, true
  end
  if text:sub(1, 1) == "~" then
    local target = text:sub(2)
    return target:match("([^.]+)$") or target, target, false
  end
  return text, text, false
end

-- {URL, title} of a :ref: label or an absolute :doc: name that compperf_docs found.
local function link_of(role, target)
  if role == "ref" then
    return links[target:lower()]
  end
  if role == "doc" and target:sub(1, 1) == "/" then
    return links[target]
  end
  return nil
end

local function role_inline(el)
  local role = el.attributes.role
  role = role:match("([^:]+)$") -- py:func -> func
  local shown, target, explicit = split_role_text(el.text)
  if role == "math" then
    return pandoc.Math("InlineMath", el.text)
  end
  local link = link_of(role, target)
  if link then
    return pandoc.Link(pandoc.Inlines(explicit and shown or link[2]), link[1])
  end
  if PROSE_ROLES[role] then
    return pandoc.Inlines(shown)
  end
  return pandoc.Code(shown)
end

local function substitution(el)
  local name = el.target:match("^##SUBST##|(.*)|$")
  if name then -- an unknown one stays visible as |name|, for the notebook check to report
    return pandoc.Inlines(values[name] or ("|" .. name .. "|"))
  end
  return nil
end

local function admonition(div)
  if div.classes:includes("title") then
    return nil -- an admonition's title: its admonition reads it
  end
  local kind = nil
  for _, class in ipairs(div.classes) do
    if ADMONITIONS[class] then
      kind = class
      break
    end
  end
  if not kind then
    return div.content -- a container or an unknown directive: keep what it says
  end
  local blocks = pandoc.Blocks(div.content)
  local title = ADMONITIONS[kind]
  if blocks[1] and blocks[1].t == "Div" and blocks[1].classes:includes("title") then
    title = stringify(blocks[1])
    blocks:remove(1)
  elseif kind == "admonition" and blocks[1] then
    title = stringify(blocks[1]) -- `.. admonition:: Title` puts its title first
    blocks:remove(1)
  end
  if div.classes:includes("dropdown") then
    local summary = title:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")
    local folded = pandoc.Blocks({ pandoc.RawBlock("html", "<details>\n<summary>" .. summary .. "</summary>") })
    folded:extend(blocks)
    folded:insert(pandoc.RawBlock("html", "</details>"))
    return folded
  end
  if title ~= "" then
    local head = pandoc.Strong(pandoc.Inlines(title .. ":"))
    if blocks[1] and (blocks[1].t == "Para" or blocks[1].t == "Plain") then
      blocks[1].content:insert(1, pandoc.Space())
      blocks[1].content:insert(1, head)
    else
      blocks:insert(1, pandoc.Para({ head }))
    end
  end
  return pandoc.BlockQuote(blocks)
end

return {
  { Meta = Meta },
  {
    Code = function(el)
      if el.classes:includes("interpreted-text") and el.attributes.role then
        return role_inline(el)
      end
    end,
    Span = function(el)
      if el.classes:includes("title-ref") then -- `text` with no role: Sphinx's default role
        return pandoc.Emph(el.content)
      end
    end,
    Link = substitution,
  },
  { Div = admonition },
}
