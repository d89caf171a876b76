#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes Glove's man pages at build time (OUT.scd, then OUT with scdoc), so that the
pages say what the built programs and docs/policy.md say, never an older
copy of it:

  mkscd.py SCDOC glove TEMPLATE GLOVE PROFILESDIR OUT
      TEMPLATE (docs/man/glove.1.scd) with @COMMANDS@ replaced by a
      subsection per command of `GLOVE help`, holding `GLOVE help COMMAND`,
      and @PROFILESDIR@ by PROFILESDIR
  mkscd.py SCDOC gloved TEMPLATE GLOVED OUT
      TEMPLATE (docs/man/gloved.1.scd) with @HELP@ replaced by
      `GLOVED --help`
  mkscd.py SCDOC policy POLICY_MD OUT
      glove-policy(5): docs/policy.md converted, section by section (its
      tables become one entry per row)
"""
import re
import subprocess
import sys


def fail(msg):
    sys.stderr.write(f"mkscd: {msg}\n")
    sys.exit(1)


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        fail(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def literal(text):
    """A literal block of |text|."""
    return "```\n" + text.rstrip("\n") + "\n```\n"


def glove_page(template, glove, profiles_dir, out):
    usage = run([glove, "help"])
    # the command list: the indented lines after "commands:"
    names, listing = [], False
    for line in usage.splitlines():
        if line == "commands:":
            listing = True
        elif listing and line.startswith("  ") and line.strip():
            names.append(line.split()[0])
        elif listing and not line.strip() and names:
            break
    if not names or "exec" not in names:
        fail(f"no command list in '{glove} help':\n{usage}")
    parts = []
    for name in names:
        if name == "help":
            continue
        parts.append(f"## glove {name}\n\n" + literal(run([glove, "help", name])))
    text = open(template, encoding="utf-8").read()
    for key, value in (("@COMMANDS@", "\n".join(parts).rstrip("\n")), ("@PROFILESDIR@", profiles_dir)):
        if key not in text:
            fail(f"{template} has no {key}")
        text = text.replace(key, value)
    open(out, "w", encoding="utf-8").write(text)


def gloved_page(template, gloved, out):
    text = open(template, encoding="utf-8").read()
    if "@HELP@" not in text:
        fail(f"{template} has no @HELP@")
    text = text.replace("@HELP@", literal(run([gloved, "--help"])).rstrip("\n"))
    open(out, "w", encoding="utf-8").write(text)


# ---- docs/policy.md to scdoc ----

def esc(s):
    """Text scdoc must print as it is."""
    return s.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")


def inline(s):
    """Markdown's inline marks as scdoc's: `code` and **bold** bold, *em*
    underlined, [text](url) as text (url)."""
    out = []
    for i, part in enumerate(re.split(r"(`[^`]*`)", s)):
        if i % 2:
            code = part[1:-1]
            out.append("\x01" + esc(code) + "\x01" if code else "")
            continue
        part = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", part)
        part = re.sub(r"\*\*(.+?)\*\*", "\x01\\1\x01", part)
        part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", "\x02\\1\x02", part)
        part = part.replace("\\|", "|")
        out.append(esc(part))
    return "".join(out).replace("\x01", "*").replace("\x02", "_")


def cells(row):
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)]


def table(rows):
    """A markdown table as one entry per row: the first cell the term, the
    others "header: cell" below it."""
    if len(rows) < 2 or not re.match(r"^\|[\s|:-]+\|?$", rows[1]):
        fail(f"a table without a header row: {rows[0][:60]}")
    head = cells(rows[0])
    out = []
    for row in rows[2:]:
        c = cells(row)
        out.append(inline(c[0]))
        body = [f"{inline(head[k])}: {inline(c[k])}" for k in range(1, len(c)) if k < len(head) and c[k]]
        for b in body:
            out.append("\t" + b[0].upper() + b[1:] + ("" if b.endswith(".") else "."))
            out.append("")
        out.append("")
    return out


def policy_page(md, out):
    lines = open(md, encoding="utf-8").read().split("\n")
    res = ["glove-policy(5)", "", "# NAME", "",
           "glove-policy - the policy file of glove(1): what the agent may see and do", "",
           "# DESCRIPTION", ""]
    i, n = 0, len(lines)
    if lines and lines[0].startswith("# "):
        i = 1
    para = []

    def flush():
        if para:
            res.append(inline(" ".join(para)))
            res.append("")
            para.clear()

    while i < n:
        line = lines[i]
        if line.startswith("#"):
            flush()
            level = len(line) - len(line.lstrip("#"))
            title = line.lstrip("#").strip()
            res.append(("# " + title.upper()) if level <= 2 else ("## " + title))
            res.append("")
            i += 1
        elif line.startswith("```"):
            flush()
            j = i + 1
            while j < n and not lines[j].startswith("```"):
                j += 1
            res.append(literal("\n".join(lines[i + 1:j])))
            i = j + 1
        elif line.startswith("    ") and not para:
            j = i
            while j < n and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            block = [x[4:] for x in lines[i:j]]
            while block and not block[-1].strip():
                block.pop()
            res.append(literal("\n".join(block)))
            i = j
        elif line.startswith("|"):
            flush()
            j = i
            while j < n and lines[j].startswith("|"):
                j += 1
            res.extend(table(lines[i:j]))
            i = j
        elif re.match(r"^(- |\d+\. )", line):
            flush()
            ordered = not line.startswith("- ")
            item = [re.sub(r"^(- |\d+\. )", "", line)]
            i += 1
            while i < n and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            res.append((". " if ordered else "- ") + inline(" ".join(item)))
            if i >= n or not re.match(r"^(- |\d+\. )", lines[i]):
                res.append("")
        elif not line.strip():
            flush()
            i += 1
        else:
            para.append(line.strip())
            i += 1
    flush()
    res += ["# SEE ALSO", "", "*glove*(1), *gloved*(1)", ""]
    open(out, "w", encoding="utf-8").write("\n".join(res))


def main(argv):
    # mkscd.py SCDOC KIND ... OUT: writes OUT.scd, then OUT with scdoc
    if len(argv) < 3:
        fail(__doc__)
    scdoc, argv = argv[1], argv[1:]
    out = argv[-1]
    argv = argv[:-1] + [out + ".scd"]
    if len(argv) == 6 and argv[1] == "glove":
        glove_page(*argv[2:])
    elif len(argv) == 5 and argv[1] == "gloved":
        gloved_page(*argv[2:])
    elif len(argv) == 4 and argv[1] == "policy":
        policy_page(*argv[2:])
    else:
        fail(__doc__)
    with open(out + ".scd", "rb") as src, open(out, "wb") as dst:
        if subprocess.run([scdoc], stdin=src, stdout=dst).returncode != 0:
            fail(f"scdoc failed on {out}.scd")


if __name__ == "__main__":
    main(sys.argv)
