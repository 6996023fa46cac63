"""Safe arithmetic for the `calculator` tool: a whitelist walk over Python's own parser.

Models are poor at arithmetic and good at writing expressions, so they get a calculator. It
must never run code: the expression is parsed with `ast` and only numbers, arithmetic operators
and a fixed set of math functions are evaluated. Sizes are bounded before computing, so
`9**9**9`, `factorial(10**6)` or `round(1, -10**1000)` fail fast instead of eating the worker,
and no result has more digits than Python will turn into text.
"""

from __future__ import annotations

import ast
import math
import operator
import sys
from collections.abc import Callable
from typing import Any

Number = int | float

MAX_LENGTH = 500
MAX_NODES = 200
MAX_DIGITS = 4300  # Python's own limit for int → str conversion
LIMIT = 10**MAX_DIGITS  # the smallest number with more digits
MAX_FACTORIAL = 1000


class CalculatorError(ValueError):
    """A message the model can read and act on."""


def _factorial(n: Number) -> int:
    if isinstance(n, float):
        if not n.is_integer():
            raise CalculatorError("factorial needs a whole number")
        n = int(n)
    if n < 0 or n > MAX_FACTORIAL:
        raise CalculatorError(f"factorial needs a whole number from 0 to {MAX_FACTORIAL}")
    return math.factorial(n)


def _round(number: Number, ndigits: Number | None = None) -> Number:
    """`round`, whose digits are bounded: `round(1, -10**6)` would compute 10**(10**6)."""
    if ndigits is None:
        return round(number)
    if not isinstance(ndigits, int) or not -MAX_DIGITS <= ndigits <= MAX_DIGITS:
        raise CalculatorError(
            f"round's digits must be a whole number from -{MAX_DIGITS} to {MAX_DIGITS}"
        )
    return round(number, ndigits)


FUNCTIONS: dict[str, Callable[..., Number]] = {
    name: getattr(math, name)
    for name in (
        "sqrt",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "log",
        "log10",
        "log2",
        "exp",
        "floor",
        "ceil",
        "hypot",
        "degrees",
        "radians",
    )
}
FUNCTIONS |= {"abs": abs, "round": _round, "min": min, "max": max, "factorial": _factorial}
CONSTANTS: dict[str, Number] = {"pi": math.pi, "e": math.e, "tau": math.tau}
BINARY: dict[type[ast.operator], Callable[[Any, Any], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def evaluate(expression: str) -> Number:
    """The value of `expression`, or CalculatorError saying what is wrong with it."""
    if len(expression) > MAX_LENGTH:
        raise CalculatorError(f"expression too long (over {MAX_LENGTH} characters)")
    text = expression.replace("^", "**").replace("×", "*").replace("÷", "/").strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculatorError("not a valid arithmetic expression") from None
    except ValueError as exc:
        raise CalculatorError(str(exc)) from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculatorError(f"expression too complex (over {MAX_NODES} parts)")
    try:
        return _eval(tree.body)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except OverflowError:
        raise CalculatorError("result too large") from None
    except (ValueError, TypeError) as exc:
        if isinstance(exc, CalculatorError):
            raise
        raise CalculatorError(f"math error: {exc}") from None


def render(value: Number) -> str:
    """The result as text; an integer past Python's int → str limit is an error, not a crash."""
    try:
        return str(value)
    except ValueError:
        raise CalculatorError(
            f"result too large to show (over {sys.get_int_max_str_digits()} digits)"
        ) from None


def _eval(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculatorError("only numbers are allowed")
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        op = BINARY.get(type(node.op))
        if op is None:
            raise CalculatorError(f"operator {type(node.op).__name__} is not supported")
        return _bounded(op(left, right))
    if isinstance(node, ast.Name):
        if node.id not in CONSTANTS:
            raise CalculatorError(f"unknown name: {node.id}")
        return CONSTANTS[node.id]
    if isinstance(node, ast.Call):
        return _call(node)
    raise CalculatorError(f"{type(node).__name__} is not allowed in arithmetic")


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name):
        raise CalculatorError("only the math functions can be called")
    if node.func.id not in FUNCTIONS:
        raise CalculatorError(f"unknown function: {node.func.id}")
    if node.keywords:
        raise CalculatorError("keyword arguments are not supported")
    if not node.args:
        raise CalculatorError(f"{node.func.id} needs an argument")
    args = [_eval(arg) for arg in node.args]
    return _bounded(FUNCTIONS[node.func.id](*args))


def _power(base: Number, exponent: Number) -> Number:
    if base not in (0, 1, -1) and abs(exponent) * math.log10(abs(base) or 1) > MAX_DIGITS:
        raise CalculatorError("result too large")
    result: Number = base**exponent
    if isinstance(result, complex):
        raise CalculatorError("the result is not a real number")
    return _bounded(result)


def _bounded(value: Number) -> Number:
    if isinstance(value, int) and abs(value) >= LIMIT:
        raise CalculatorError(f"result too large (over {MAX_DIGITS} digits)")
    if isinstance(value, complex):
        raise CalculatorError("the result is not a real number")
    return value
