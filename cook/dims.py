"""Tensor dimensions: integers, or expressions over named symbols.

A `Dim` is a Python int or an `Expr`. An `Expr` is kept in a canonical form, and any
operation whose result simplifies to a constant returns a plain int, so
`is_concrete(d)` is `isinstance(d, int)` and code that never meets a symbol never sees
an `Expr`.

Canonical form: a sum of monomials with integer coefficients, each monomial a sorted
product of atoms, the atoms being
  - symbols (`S`),
  - floor divisions of an expression by a positive integer (`(S+1)/2`),
  - min / max of several expressions.
Ceiling division is floor((a + d - 1) / d). Simplifications:
  - like monomials merge (`S+2-2 == S`, `S*2 - S == S`);
  - floor((d·q + r) / d) = q + floor(r / d) for integer-valued q (`2*S/2 == S`);
  - the constant under a division is reduced modulo the divisor
    (`(S-3)/2 + 1` is `(S+1)/2 - 1`);
  - nested divisions merge (`(S/2)/3 == S/6`);
  - min/max flatten, drop duplicates, combine integers and pick between two operands
    that differ by a constant.
Equality (`==`) compares canonical forms: equal forms are equal for every value of the
symbols (sound); two forms that differ may still be equal for every value (e.g. `S/2 +
(S+1)/2` and `S`): the typing rules then report a mismatch rather than guess.

Text form (`parse` / `to_str`): integers, symbol names, `+ - *`, `/` (floor division by
an integer), `%`, parentheses, `min(a, b, …)`, `max(…)`; e.g. "S", "S+2", "2*S",
"(S-3)/2+1". Symbols stand for non-negative integers (tensor sizes).

Nothing outside this module should call `int()` on a Dim or compare it with
`isinstance(d, int)`: use `is_concrete` / `to_int`.
"""
import itertools
import math
import numbers
import re

from .errors import CookError


class Expr:
    """A non-constant symbolic dimension in canonical form (immutable, hashable)."""

    __slots__ = ("terms", "_hash", "_key")

    def __init__(self, terms):
        # terms: tuple of (monomial, coefficient), monomial a sorted tuple of atoms
        self.terms = terms
        self._hash = None
        self._key = None

    # -- identity -------------------------------------------------------------------
    def key(self):
        if self._key is None:
            self._key = to_str(self)
        return self._key

    def __eq__(self, other):
        if isinstance(other, Expr):
            return self.terms == other.terms
        return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self.terms)
        return self._hash

    def __bool__(self):
        raise CookError(f"the truth of the symbolic dimension {self} is unknown")

    def __int__(self):
        raise CookError(f"dimension {self} is symbolic, an integer is needed here")

    __index__ = __int__

    # -- arithmetic -----------------------------------------------------------------
    def __add__(self, other):
        return add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return add(self, neg(other))

    def __rsub__(self, other):
        return add(other, neg(self))

    def __neg__(self):
        return neg(self)

    def __pos__(self):
        return self

    def __mul__(self, other):
        return mul(self, other)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return div_floor(self, other)

    def __rfloordiv__(self, other):
        return div_floor(other, self)

    def __mod__(self, other):
        return mod(self, other)

    # Order: known when the difference is a constant, or from symbols being ≥ 0.
    def __lt__(self, other):
        return _is_positive(sub(other, self), self, other)

    def __le__(self, other):
        return not _is_positive(sub(self, other), self, other)

    def __gt__(self, other):
        return _is_positive(sub(self, other), self, other)

    def __ge__(self, other):
        return not _is_positive(sub(other, self), self, other)

    def __repr__(self):
        return f"Dim({to_str(self)!r})"

    def __str__(self):
        return to_str(self)

    def __reduce__(self):
        return (parse, (to_str(self),))

    def symbols(self):
        found = set()
        for monomial, _ in self.terms:
            for atom in monomial:
                found |= _atom_symbols(atom)
        return found


Dim = (int, Expr)


# -- atoms --------------------------------------------------------------------------
# ("sym", name) | ("div", Expr, divisor) | ("min", (dims…)) | ("max", (dims…))

def _atom_key(atom):
    kind = atom[0]
    if kind == "sym":
        return (0, atom[1])
    if kind == "div":
        return (1, atom[1].key(), atom[2])
    return (2 if kind == "min" else 3, tuple(_dim_key(a) for a in atom[1]))


def _dim_key(dim):
    return (0, str(dim)) if isinstance(dim, int) else (1, dim.key())


def _atom_symbols(atom):
    if atom[0] == "sym":
        return {atom[1]}
    if atom[0] == "div":
        return atom[1].symbols()
    return set().union(*(symbols(a) for a in atom[1]))


def _atom_str(atom):
    kind = atom[0]
    if kind == "sym":
        return atom[1]
    if kind == "div":
        inner = atom[1]
        text = to_str(inner)
        if not _is_single_atom(inner):
            text = f"({text})"
        return f"{text}/{atom[2]}"
    return f"{kind}({', '.join(to_str(a) for a in atom[1])})"


def _is_single_atom(expr):
    return len(expr.terms) == 1 and expr.terms[0][1] == 1 and len(expr.terms[0][0]) == 1 \
        and expr.terms[0][0][0][0] != "div"


# -- polynomials --------------------------------------------------------------------
def _poly(value):
    if isinstance(value, Expr):
        return dict(value.terms)
    if isinstance(value, numbers.Integral):
        value = int(value)
        return {(): value} if value else {}
    if isinstance(value, str):
        return _poly(parse(value))
    raise CookError(f"{value!r} is not a dimension")


def _make(poly):
    poly = {m: c for m, c in poly.items() if c}
    if not poly:
        return 0
    if list(poly) == [()]:
        return int(poly[()])
    items = sorted(poly.items(), key=lambda mc: (len(mc[0]) == 0,
                                                 tuple(_atom_key(a) for a in mc[0])))
    return Expr(tuple(items))


def _atom_dim(atom):
    return Expr(((((atom,)), 1),))


def symbol(name):
    """The dimension made of one symbol."""
    # dots inside a name too: tract names symbols after ONNX dims ("batch.size")
    if not re.fullmatch(r"[A-Za-z_](?:[A-Za-z0-9_]|\.(?=[A-Za-z0-9_]))*", name or ""):
        raise CookError(f"invalid symbol name {name!r}")
    return _atom_dim(("sym", name))


def is_concrete(dim):
    """True when the dim is a known integer."""
    return isinstance(dim, int)


def is_dim(value):
    return isinstance(value, (numbers.Integral, Expr))


def to_int(dim, what="dimension"):
    """The integer value of a dim; raises for a symbolic one."""
    if isinstance(dim, Expr):
        raise CookError(f"{what} {dim} must be a known integer here (it is symbolic; bind "
                        "its symbols with set_symbols or give a concrete input fact)")
    return int(dim)


def from_value(value):
    """A Dim from an integer-like value (numpy ints included) or an Expr."""
    if isinstance(value, Expr):
        return value
    return int(value)


def symbols(dim):
    return dim.symbols() if isinstance(dim, Expr) else set()


def add(a, b):
    pa, pb = _poly(a), _poly(b)
    for monomial, coef in pb.items():
        pa[monomial] = pa.get(monomial, 0) + coef
    return _make(pa)


def neg(a):
    return _make({m: -c for m, c in _poly(a).items()})


def sub(a, b):
    return add(a, neg(b))


def mul(a, b):
    pa, pb = _poly(a), _poly(b)
    result = {}
    for (ma, ca), (mb, cb) in itertools.product(pa.items(), pb.items()):
        monomial = tuple(sorted(ma + mb, key=_atom_key))
        result[monomial] = result.get(monomial, 0) + ca * cb
    return _make(result)


def _divisor(d):
    if isinstance(d, Expr):
        raise CookError(f"division by the symbolic dimension {d} is not supported")
    d = int(d)
    if d == 0:
        raise CookError("division of a dimension by zero")
    return d


def div_floor(a, d):
    """floor(a / d) for an integer d."""
    d = _divisor(d)
    if d < 0:
        return div_floor(neg(a), -d)
    if isinstance(a, numbers.Integral):
        return int(a) // d
    if d == 1:
        return a
    poly = _poly(a)
    quotient, rest = {}, {}
    for monomial, coef in poly.items():
        if monomial and coef % d == 0:
            quotient[monomial] = coef // d
        elif monomial:
            rest[monomial] = coef
    constant = poly.get((), 0)
    quotient[()] = constant // d
    remainder = constant % d
    if rest:
        # floor((g·x + r) / (g·k)) = floor((x + floor(r/g)) / k)
        g = d
        for coef in rest.values():
            g = math.gcd(g, coef)
        if g > 1:
            rest = {m: c // g for m, c in rest.items()}
            remainder, d = remainder // g, d // g
        # floor((floor(x/a) + r) / b) = floor((x + a·r) / (a·b))
        if len(rest) == 1:
            (monomial, coef), = rest.items()
            if coef == 1 and len(monomial) == 1 and monomial[0][0] == "div":
                _, x, a_div = monomial[0]
                nested = div_floor(add(x, a_div * remainder), a_div * d)
                return add(_make(quotient), nested)
        if remainder:
            rest[()] = remainder
        atom = ("div", _make(rest), d)
        quotient[(atom,)] = quotient.get((atom,), 0) + 1
    return _make(quotient)


def div_ceil(a, d):
    """ceil(a / d) for an integer d > 0."""
    d = _divisor(d)
    if d < 0:
        return neg(div_floor(a, -d))
    return div_floor(add(a, d - 1), d)


def mod(a, d):
    """a - d * floor(a / d) (non-negative for d > 0)."""
    return sub(a, mul(d, div_floor(a, d)))


def _min_max(kind, values):
    flat = []
    for value in values:
        value = from_value(value)
        if isinstance(value, Expr) and len(value.terms) == 1 and value.terms[0][1] == 1 \
                and len(value.terms[0][0]) == 1 and value.terms[0][0][0][0] == kind:
            flat.extend(value.terms[0][0][0][1])
        else:
            flat.append(value)
    kept = []
    for value in flat:
        merged = False
        for index, other in enumerate(kept):
            difference = sub(value, other)
            if isinstance(difference, int):
                value_first = difference < 0 if kind == "min" else difference > 0
                kept[index] = value if value_first else other
                merged = True
                break
        if not merged:
            kept.append(value)
    if len(kept) == 1:
        return kept[0]
    kept.sort(key=_dim_key)
    return _atom_dim((kind, tuple(kept)))


def minimum(*values):
    return _min_max("min", values)


def maximum(*values):
    return _min_max("max", values)


def _is_positive(difference, a, b):
    """difference > 0, when it is known for all values ≥ 0 of the symbols."""
    low = _lower_bound(difference)
    if low is not None and low > 0:
        return True
    high = _lower_bound(neg(difference))
    if high is not None and high >= 0:
        return False
    raise CookError(f"cannot compare the symbolic dimensions {a} and {b}")


def _lower_bound(dim):
    """A lower bound of dim for symbols ≥ 0, or None (only linear sums with coefs ≥ 0)."""
    if isinstance(dim, int):
        return dim
    total = 0
    for monomial, coef in dim.terms:
        if not monomial:
            total += coef
        elif coef < 0:
            return None
    return total


def evaluate(dim, values):
    """The integer value of dim given {symbol: int}; raises when a symbol is missing."""
    result = substitute(dim, values)
    if isinstance(result, Expr):
        raise CookError(f"dimension {dim}: no value for symbol(s) "
                        f"{', '.join(sorted(result.symbols()))}")
    return result


def substitute(dim, values):
    """dim with some symbols replaced by ints (or other dims), simplified."""
    if not isinstance(dim, Expr):
        return int(dim)
    total = 0
    for monomial, coef in dim.terms:
        term = coef
        for atom in monomial:
            term = mul(term, _substitute_atom(atom, values))
        total = add(total, term)
    return total


def _substitute_atom(atom, values):
    kind = atom[0]
    if kind == "sym":
        return from_value(values[atom[1]]) if atom[1] in values else _atom_dim(atom)
    if kind == "div":
        return div_floor(substitute(atom[1], values), atom[2])
    return _min_max(kind, [substitute(a, values) for a in atom[1]])


# -- text ---------------------------------------------------------------------------
def to_str(dim):
    if not isinstance(dim, Expr):
        return str(int(dim))
    parts = []
    for monomial, coef in dim.terms:
        if not monomial:
            text = str(abs(coef))
        else:
            factors = [_atom_str(a) for a in monomial]
            if len(monomial) > 1 or abs(coef) != 1:
                factors = [f"({f})" if a[0] == "div" else f for a, f in zip(monomial, factors)]
            text = "*".join(factors)
            if abs(coef) != 1:
                text = f"{abs(coef)}*{text}"
        if not parts:
            parts.append(("-" if coef < 0 else "") + text)
        else:
            parts.append(("-" if coef < 0 else "+") + text)
    return "".join(parts)


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_](?:[A-Za-z0-9_]|\.(?=[A-Za-z0-9_]))*)|(.))")


def shape_str(shape):
    """'[T, N, 64]': a shape for messages (dims as the user writes them)."""
    return "[" + ", ".join(str(d) for d in shape) + "]"


def parse(text):
    """A Dim from its text form: "224", "S", "S+2", "2*S", "(S-3)/2+1", "min(S, 4)"."""
    if isinstance(text, (int, Expr)):
        return text
    source = str(text).strip()
    tokens = []
    for number, name, other in _TOKEN.findall(source):
        if number:
            tokens.append(("int", int(number)))
        elif name:
            tokens.append(("name", name))
        elif other.strip():
            tokens.append(("op", other))
    tokens.append(("end", None))
    position = [0]

    def peek():
        return tokens[position[0]]

    def take(expected=None):
        token = tokens[position[0]]
        if expected is not None and token != ("op", expected):
            raise CookError(f"dimension {source!r}: expected {expected!r}")
        position[0] += 1
        return token

    def expression():
        if peek() == ("op", "-"):
            take()
            value = neg(term())
        else:
            value = term()
        while peek() in (("op", "+"), ("op", "-")):
            if take()[1] == "+":
                value = add(value, term())
            else:
                value = sub(value, term())
        return value

    def term():
        value = factor()
        while peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            operator = take()[1]
            right = factor()
            if operator == "*":
                value = mul(value, right)
            elif operator == "/":
                value = div_floor(value, right)
            else:
                value = mod(value, _divisor(right))
        return value

    def factor():
        kind, value = take()
        if kind == "int":
            return value
        if kind == "name":
            if value in ("min", "max") and peek() == ("op", "("):
                take("(")
                args = [expression()]
                while peek() == ("op", ","):
                    take()
                    args.append(expression())
                take(")")
                return _min_max(value, args)
            return symbol(value)
        if (kind, value) == ("op", "-"):
            return neg(factor())
        if (kind, value) == ("op", "("):
            inner = expression()
            take(")")
            return inner
        raise CookError(f"dimension {source!r}: unexpected {value!r}")

    if not source:
        raise CookError("empty dimension")
    result = expression()
    if peek()[0] != "end":
        raise CookError(f"dimension {source!r}: unexpected {peek()[1]!r}")
    if isinstance(result, int) and result < 0:
        raise CookError(f"dimension {source!r} is negative")
    return result


# -- shape helpers ------------------------------------------------------------------
def product(values):
    result = 1
    for dim in values:
        result = mul(result, dim) if isinstance(dim, Expr) or isinstance(result, Expr) \
            else result * int(dim)
    return result


def broadcast(a, b):
    """numpy broadcasting of one dim pair; None when incompatible."""
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    return None


def broadcast_shapes(shapes):
    """numpy broadcasting of several shapes; None when incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        padded = [1] * (rank - len(shape)) + list(shape)
        for axis, dim in enumerate(padded):
            merged = broadcast(result[axis], dim)
            if merged is None:
                return None
            result[axis] = merged
    return tuple(result)


def div_exact(value, divisor):
    """value / divisor when it divides exactly (for all symbol values), else None.

    The divisor may be symbolic when it is a factor of value ("6*S*T" / "2*S")."""
    if isinstance(divisor, Expr):
        if len(divisor.terms) != 1:
            return None
        (monomial, coef), = divisor.terms
        poly = {}
        for m, c in _poly(value).items():
            rest = list(m)
            for atom in monomial:
                if atom not in rest:
                    return None
                rest.remove(atom)
            poly[tuple(rest)] = c
        return div_exact(_make(poly), coef)
    divisor = int(divisor)
    if divisor == 0:
        return None
    if not divides(divisor, value):
        return None
    return div_floor(value, divisor)


def divides(d, value):
    """True when the integer d divides value exactly (for every value of its symbols)."""
    return mod(value, d) == 0


def window_output(input_dim, kernel, stride, dilation, pad_before, pad_after, ceil=False):
    """Output length of a sliding window (conv, pool) over one spatial axis."""
    span = (kernel - 1) * dilation + 1
    room = add(add(input_dim, pad_before + pad_after), -span)
    return add(div_ceil(room, stride) if ceil else div_floor(room, stride), 1)


def same_padding(input_dim, kernel, stride, dilation, upper=True):
    """(before, after) for ONNX auto_pad SAME_UPPER / SAME_LOWER (output = ceil(in/stride))."""
    span = (kernel - 1) * dilation + 1
    if stride == 1:
        total = max(span - 1, 0)
    else:
        output = div_ceil(input_dim, stride)
        total = maximum(add(sub(mul(sub(output, 1), stride), input_dim), span), 0)
    if not is_concrete(total):
        raise CookError(f"SAME padding with stride {stride} on the symbolic dimension "
                        f"{input_dim} depends on its value: give a concrete input fact")
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


def surely_less(dim, bound):
    """True only when dim < bound is certain (symbols ≥ 0); unknown counts as False."""
    try:
        return bool(dim < bound) if isinstance(dim, Expr) or isinstance(bound, Expr) \
            else dim < bound
    except CookError:
        return False
