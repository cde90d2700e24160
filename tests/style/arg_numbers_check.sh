#!/bin/sh
# Every argument number in the library's error messages is the position, in the signature the
# user calls, of the parameter the message names. Over the C sources of src/ and operators/ (the
# library), in each function definition's body, it reads the claims "argument N (name)" of
#   - FCL_CHECK_NULL(name, N) (src/runtime/check.h prints the first argument's text as the name,
#     which must then be an identifier);
#   - FCL_CHECK_ARG(cond, N, "name", what);
#   - a string (adjacent literals joined) with "argument N" or "argument %d", which must go on
#     with " (name)" or " (%s)"; %d and %s take the printf arguments that the format gives them.
# N is a number, or a parameter of the function plus a number (a helper told the position by its
# caller: pos + 1); the name is an identifier, or a parameter of the function holding the
# string (a helper told the name). Each claim is checked where the user meets it:
#   - in a public function (non-static fcl_..., not fcl__...) or one that nothing in the library
#     calls (reached through a pointer, with its own signature): parameter N is called `name`;
#   - in any other function (a helper), at each call, as a claim of the caller: with the number
#     and the name that the call passes for such parameters (a number, a string, or the
#     caller's own parameter, followed further up), up to public functions. A name that is
#     also a parameter of the helper must be passed the caller's variable of that name (the
#     value the message describes is then the caller's argument). A name passed as a string
#     is not tied to the value checked: that pairing is the caller's to get right.
# Messages about a kernel's arguments (argument %u, %zu) are not about the C function: not read.
# Usage: arg_numbers_check.sh SOURCE_DIR. Prints, for each wrong claim, its file:line, function
# and text, the calls followed, and the argument of that number (or the number of arguments)
# in the signature the user calls; exit 1 if any.
src=${1:?usage: arg_numbers_check.sh SOURCE_DIR}
cd "$src" || exit 1
files=$(find src operators -name '*.c' | LC_ALL=C sort)
[ -n "$files" ] || { echo "arg_numbers: no C sources under $src/src, $src/operators"; exit 1; }
# shellcheck disable=SC2086 # the file names have no spaces
awk '
function emit(text, kind) {
  nt++; T[nt] = text; K[nt] = kind; LN[nt] = FNR; TF[nt] = nf
}
# Tokens of one line: identifiers (i), numbers (n), string (s) and character (c) literals
# without their quotes, punctuation (p); comments and preprocessor lines dropped.
function tokenize(line, keep,    i, n, c, j, q, rest) {
  n = length(line); i = 1
  while (i <= n) {
    if (incomment) {
      j = index(substr(line, i), "*/")
      if (!j) return
      i += j + 1; incomment = 0; continue
    }
    c = substr(line, i, 1)
    if (c ~ /[ \t\r\f\v]/) { i++; continue }
    if (substr(line, i, 2) == "/*") { incomment = 1; i += 2; continue }
    if (substr(line, i, 2) == "//") return
    if (c == "\"" || c == "\047") {
      for (j = i + 1; j <= n && substr(line, j, 1) != c; j++)
        if (substr(line, j, 1) == "\\") j++
      if (keep) emit(substr(line, i + 1, j - i - 1), c == "\"" ? "s" : "c")
      i = j + 1; continue
    }
    rest = substr(line, i)
    if (match(rest, /^[A-Za-z_][A-Za-z0-9_]*/) || match(rest, /^[0-9][A-Za-z0-9_.]*/)) {
      if (keep) emit(substr(rest, 1, RLENGTH), c ~ /[0-9]/ ? "n" : "i")
      i += RLENGTH; continue
    }
    q = substr(line, i, 3) == "..." ? 3 : substr(line, i, 2) == "->" ? 2 : 1
    if (keep) emit(substr(line, i, q), "p")
    i += q
  }
}
FNR == 1 { nf++; FN[nf] = FILENAME; FS0[nf] = nt + 1; incomment = 0; inpp = 0 }
{
  if (!incomment && $0 ~ /^[ \t]*#/) inpp = 1
  tokenize($0, !inpp)
  if (inpp) inpp = $0 ~ /\\$/
}
function fail(msg) { print msg; bad++ }
function where(t) { return FN[TF[t]] ":" LN[t] }
# Brackets of file f: M[i] is the partner of bracket i, ENC[i] the innermost open bracket
# around token i.
function brackets(f, a, b,    i, sp, st) {
  sp = 0
  for (i = a; i <= b; i++) {
    ENC[i] = sp ? st[sp] : 0
    if (T[i] ~ /^[({[]$/ && K[i] == "p") st[++sp] = i
    else if (T[i] ~ /^[)}\]]$/ && K[i] == "p") {
      if (!sp || index("({[", T[st[sp]]) != index(")}]", T[i])) {
        fail(where(i) ": cannot read the brackets of this file (an unmatched \"" T[i] "\")")
        return 0
      }
      M[i] = st[sp]; M[st[sp]] = i; sp--
    }
  }
  if (sp) { fail(where(st[sp]) ": cannot read the brackets of this file (unclosed)"); return 0 }
  return 1
}
# The comma-separated items between bracket o and its partner: AS[k]..AE[k], k = 1..count.
function items(o,    i, n) {
  n = 0
  if (M[o] == o + 1) return 0
  n = 1; AS[1] = o + 1
  for (i = o + 1; i < M[o]; i++) {
    if (T[i] ~ /^[({[]$/ && K[i] == "p") { i = M[i]; continue }
    if (T[i] == "," && K[i] == "p") { AE[n] = i - 1; AS[++n] = i + 1 }
  }
  AE[n] = M[o] - 1
  return n
}
function text(a, b,    s, i) {
  s = ""
  for (i = a; i <= b; i++) s = s (i > a && K[i] ~ /[in]/ && K[i - 1] ~ /[in]/ ? " " : "") T[i]
  return s
}
# The name a parameter declaration a..b declares (a function pointer: the name after "(*").
function param_name(a, b,    i, name) {
  name = ""
  for (i = a; i <= b; i++) {
    if (T[i] == "(" && T[i + 1] == "*" && K[i + 2] == "i") return T[i + 2]
    if (T[i] ~ /^[({[]$/ && K[i] == "p") { i = M[i]; continue }
    if (K[i] == "i") name = T[i]
  }
  return name
}
# The function definitions of file f (tokens a..b): name, parameters, body, static or not.
function definitions(f, a, b,    i, o, k, n, s) {
  for (i = a; i <= b; i++) {
    if (!(T[i] ~ /^[({[]$/ && K[i] == "p")) continue
    if (T[i] == "{" && T[i - 1] == ")" && K[M[i - 1] - 1] == "i") {
      o = M[i - 1]; nfn++
      FNAME[nfn] = T[o - 1]; FLINE[nfn] = where(o - 1); FFILE[nfn] = f; FB[nfn] = i
      n = items(o)
      if (n == 1 && T[AS[1]] == "void" && AE[1] == AS[1]) n = 0
      NP[nfn] = n
      for (k = 1; k <= n; k++) PN[nfn, k] = param_name(AS[k], AE[k])
      s = 0
      for (k = o - 2; k >= a && T[k] != ";" && T[k] != "}"; k--) if (T[k] == "static") s = 1
      STATIC[nfn] = s
      BYNAME[T[o - 1]] = BYNAME[T[o - 1]] " " nfn
    }
    i = M[i]
  }
}
# The definition a call to `name` from file f reaches: the static one of that file, else the
# non-static one of the library; 0 for none.
function callee(name, f,    ids, n, k, found) {
  n = split(BYNAME[name], ids, " "); found = 0
  for (k = 1; k <= n; k++) {
    if (STATIC[ids[k]] && FFILE[ids[k]] == f) return ids[k]
    if (!STATIC[ids[k]]) found = ids[k]
  }
  return found
}
function public(g) { return !STATIC[g] && FNAME[g] ~ /^fcl_[a-z0-9]/ }
# The index of the parameter `name` of g; 0 if there is none.
function param_index(g, name,    k) {
  for (k = 1; k <= NP[g]; k++) if (PN[g, k] == name) return k
  return 0
}
# The index of the parameter of g that the expression a..b is; 0 if it is none.
function param_at(g, a, b) { return a == b && K[a] == "i" ? param_index(g, T[a]) : 0 }
# An argument number a..b of g: a number NUM (PAR 0), or parameter PAR of g plus NUM. Returns 0
# when it is neither.
function number(g, a, b) {
  PAR = 0; NUM = 0
  if (a == b && T[a] ~ /^[0-9]+$/) { NUM = T[a] + 0; return 1 }
  if (b == a + 2 && T[a + 1] == "+" && T[b] ~ /^[0-9]+$/) NUM = T[b] + 0
  else if (a != b) return 0
  PAR = param_at(g, a, a)
  return PAR > 0
}
# The claim "argument N (name)" in g, where N is the number n (np 0) or parameter np of g plus
# n, and the name the identifier `name` (ns 0) or the string parameter ns of g. It is checked
# against the parameters of g if g is public or nothing calls it, else at every call of g, in
# the caller: the numbers and names that the call passes, and the named parameter of g, if the
# name is one, passed as itself. what: the claim as written, at where; via: the calls followed.
function resolve(g, np, n, ns, name, what, via,    key, pi, c, h, m, e, nn, nnp, nns, nname) {
  key = g SUBSEP np SUBSEP n SUBSEP ns SUBSEP name SUBSEP what
  if (key in SEEN) return
  SEEN[key] = 1
  if (!np && !ns && (public(g) || !NCALLS[g])) {
    sub(/\..*/, "", name) # "prefetch.array" names a member of parameter prefetch
    if (n < 1 || n > NP[g] || PN[g, n] != name)
      fail(what via ": as argument " n " (" name ") of " FNAME[g] "() (" FLINE[g] "), which " \
           (n < 1 || n > NP[g] ? "has " NP[g] " parameter(s)" : "calls it \047" PN[g, n] "\047"))
    return
  }
  if (public(g) || !NCALLS[g]) {
    fail(what via ": its " (np ? "number" : "name") " is parameter \047" PN[g, np ? np : ns] \
         "\047 of " FNAME[g] "(), which " (public(g) ? "the user calls" : "nothing calls"))
    return
  }
  pi = ns ? 0 : param_index(g, name)
  for (c = 1; c <= NCALLS[g]; c++) {
    h = CALLER[g, c]
    m = items(CALLAT[g, c])
    e = via " <- " FNAME[h] "() at " where(CALLAT[g, c])
    if (m < np || m < ns || m < pi) { fail(what e ": the call passes " m " argument(s)"); continue }
    nnp = 0; nn = n
    if (np) {
      if (!number(h, AS[np], AE[np])) {
        fail(what e ": the number passed, \047" text(AS[np], AE[np]) "\047, is neither a number " \
             "nor a parameter plus a number")
        continue
      }
      nnp = PAR; nn = NUM + n
    }
    nns = 0; nname = name
    if (ns) {
      if (AS[ns] == AE[ns] && K[AS[ns]] == "s") nname = T[AS[ns]]
      else if (!(nns = param_at(h, AS[ns], AE[ns]))) {
        fail(what e ": the name passed, \047" text(AS[ns], AE[ns]) "\047, is neither a string " \
             "nor a parameter")
        continue
      }
    } else if (pi && !(AS[pi] == AE[pi] && T[AS[pi]] == name)) {
      fail(what e ": passes \047" text(AS[pi], AE[pi]) "\047 as \047" name "\047")
      continue
    }
    resolve(h, nnp, nn, nns, nname, what, e)
  }
}
# A claim of g: its number, the expression a..b or (a 0) lit; its name, `name` or (na > 0)
# the expression na..nb.
function claim(g, a, b, lit, name, na, nb, what,    ns) {
  ns = 0
  if (na) {
    if (na == nb && K[na] == "s") name = T[na]
    else if (!(ns = param_at(g, na, nb))) {
      fail(what ": the name, \047" text(na, nb) "\047, is neither a string nor a parameter")
      return
    }
  }
  if (!a) { PAR = 0; NUM = lit }
  else if (!number(g, a, b)) {
    fail(what ": the number, \047" text(a, b) "\047, is neither a number nor a parameter plus " \
         "a number")
    return
  }
  resolve(g, PAR, NUM, ns, name, what, "")
}
# The printf arguments that the conversions of fmt take (a "*" takes one more).
function conversions(fmt,    n, s) {
  n = 0
  while (match(fmt, /%[-+ #0]*(\*|[0-9]+)?(\.(\*|[0-9]+))?(hh|h|ll|l|z|j|t|L)?[diouxXeEfgGaAcsp%]/)) {
    s = substr(fmt, RSTART, RLENGTH)
    if (s != "%%") n += 1 + gsub(/\*/, "", s)
    fmt = substr(fmt, RSTART + RLENGTH)
  }
  return n
}
# The claims of function g: its checking macros and "argument N (name)" texts.
function claims(g,    i, j, n, msg, at, name, arg, what, o, k, ka, kn, x, s, e) {
  for (i = FB[g] + 1; i < M[FB[g]]; i++) {
    if ((T[i] == "FCL_CHECK_NULL" || T[i] == "FCL_CHECK_ARG") && T[i + 1] == "(") {
      n = items(i + 1)
      what = where(i) ": " FNAME[g] "(): " T[i] "(" text(AS[1], AE[1]) ", " text(AS[2], AE[2])
      if (T[i] == "FCL_CHECK_ARG") {
        what = what ", " (K[AS[3]] == "s" ? "\"" T[AS[3]] "\"" : text(AS[3], AE[3])) ", ...)"
        claim(g, AS[2], AE[2], 0, "", AS[3], AE[3], what)
      } else if (AS[1] != AE[1] || K[AS[1]] != "i")
        fail(what "): the pointer is not named by an identifier")
      else claim(g, AS[2], AE[2], 0, T[AS[1]], 0, 0, what ")")
      continue
    }
    if (K[i] != "s" || K[i - 1] == "s") continue
    msg = T[i]
    for (j = i + 1; K[j] == "s"; j++) msg = msg T[j]
    o = ENC[i]
    n = T[o] == "(" ? items(o) : 0
    for (x = 1; x <= n; x++) { s[x] = AS[x]; e[x] = AE[x] } # claim() reads other items
    for (k = 1; k <= n && e[k] < i; k++) ; # the format: printf argument k
    at = 0
    while (match(substr(msg, at + 1), /argument ([0-9]+|%d)/)) {
      at += RSTART + RLENGTH - 1
      arg = substr(msg, at - RLENGTH + 10, RLENGTH - 9)
      what = where(i) ": " FNAME[g] "(): \"argument " arg
      if (!match(substr(msg, at + 1), /^ \(([A-Za-z_][A-Za-z0-9_]*|%s)\)/)) {
        fail(what "\": not followed by \" (name)\" of a parameter")
        continue
      }
      name = substr(msg, at + 3, RLENGTH - 3)
      what = what " (" name ")\""
      kn = k + 1 + conversions(substr(msg, 1, at + 2)) # the %s, if it is one
      ka = k + 1 + conversions(substr(msg, 1, at - 2)) # the %d, if it is one
      if ((arg == "%d" && ka > n) || (name == "%s" && kn > n)) {
        fail(what ": cannot find the value of its %d or %s")
        continue
      }
      claim(g, arg == "%d" ? s[ka] : 0, arg == "%d" ? e[ka] : 0, arg + 0, name,
            name == "%s" ? s[kn] : 0, name == "%s" ? e[kn] : 0, what)
    }
    i = j - 1
  }
}
END {
  for (f = 1; f <= nf; f++) {
    last = f < nf ? FS0[f + 1] - 1 : nt
    if (brackets(f, FS0[f], last)) definitions(f, FS0[f], last)
  }
  # the calls between the library functions
  for (g = 1; g <= nfn; g++)
    for (i = FB[g] + 1; i < M[FB[g]]; i++)
      if (K[i] == "i" && T[i + 1] == "(" && T[i - 1] != "." && T[i - 1] != "->" &&
          (h = callee(T[i], FFILE[g]))) {
        NCALLS[h]++; CALLER[h, NCALLS[h]] = g; CALLAT[h, NCALLS[h]] = i + 1
      }
  for (g = 1; g <= nfn; g++) claims(g)
  if (bad) print "arg_numbers: " bad " message(s) name the wrong argument (see above)"
  else print "arg_numbers: the argument numbers of " nfn " functions name their parameters"
  exit bad > 0
}' $files
