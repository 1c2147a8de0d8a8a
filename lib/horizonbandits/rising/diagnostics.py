"""What an instance is: per-arm shape checks and which of the paper's theorems apply to it.

``diagnose(inst, T)`` (also ``inst.diagnose(T)``) checks each curve for the assumptions the CURE-UCB
paper's results rely on (rising: nondecreasing; concave: nonincreasing increments; linear-then-flat:
mu(n) = min(b, a n)), reports where a curve first breaks each one and by how much, its saturation
point, its cumulative reward up to T, and the optimal arm at T.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # a type hint only: instances imports this module for RisingInstance.diagnose
    from .instances import RisingInstance

# Theorem -> the assumptions (names of DiagnosisReport.assumptions) it needs.
THEOREMS = {
    "Proposition 3.2 (commit to one arm is optimal)": ["rising"],
    "Theorem 5.2 (CURE-UCB dominates R-ed-UCB)": ["linear-then-flat"],
    "Proposition 5.3 construction": ["linear-then-flat"],
    "Theorem 5.5 (regret bound)": ["rising", "concave"],
}


@dataclass
class DiagnosisReport:
    T: int
    table: pd.DataFrame
    optimal_arm: str
    assumptions: dict = field(default_factory=dict)
    theorems: dict = field(default_factory=dict)

    def _repr_markdown_(self) -> str:
        lines = [f"**Optimal arm at T = {self.T:,}: {self.optimal_arm}**", "",
                 self.table.to_markdown(index=False) if _has_tabulate() else f"```\n{self.table.to_string(index=False)}\n```",
                 "", "Assumptions: " + ", ".join(f"{k} {'yes' if v else 'NO'}" for k, v in self.assumptions.items()),
                 "", "Theorems whose hypotheses hold: "
                 + ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in self.theorems.items())]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"DiagnosisReport(T={self.T}, optimal arm={self.optimal_arm!r}, assumptions={self.assumptions})\n"
                + self.table.to_string(index=False))


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
        return True
    except ImportError:
        return False


def diagnose(inst: RisingInstance, T: int | None = None, tol: float = 1e-12) -> DiagnosisReport:
    """Shape checks per arm over n = 0..T_max and the optimal arm at T (default T_max).

    A curve is *rising* if mu(n+1) >= mu(n) - tol for every n, *concave* if its increments never
    grow by more than tol, *linear-then-flat* if mu(n) = min(b, a n) for n >= 1 with a = mu(1)
    and b its last value (to within 1e-9 relative). Saturation point: the first n from which the curve
    stays constant (None if it still moves at T_max); ``n_95`` the first n reaching 95 % of its rise.
    """
    T = inst.T_max if T is None else inst.check_horizon(T)
    rows = []
    means = inst.means
    n_all = np.arange(inst.T_max + 1)
    for i, name in enumerate(inst.names):
        mu = means[i]
        inc = np.diff(mu)
        drops = np.flatnonzero(inc < -tol)
        accel = np.flatnonzero(np.diff(inc) > tol)
        moving = np.flatnonzero(np.abs(inc) > tol)
        saturation = None if moving.size and moving[-1] == inc.size - 1 else int(moving[-1] + 1) if moving.size else 0
        rise = mu.max() - mu[0]
        n95 = int(np.argmax(mu >= mu[0] + 0.95 * rise)) if rise > 0 else 0
        a, b = mu[1], mu[-1]
        ltf_curve = np.minimum(b, a * n_all)
        # Definition 5.1 constrains n >= 1; mu(0) is a convention of the proofs (Prop. 5.3 sets 1/2).
        ltf = bool(a >= 0 and np.allclose(mu[1:], ltf_curve[1:], rtol=1e-9, atol=tol))
        rows.append(dict(
            arm=name,
            rising=drops.size == 0,
            first_drop_n=int(drops[0]) if drops.size else None,
            drop=float(inc[drops[0]]) if drops.size else None,
            concave=accel.size == 0,
            first_convex_n=int(accel[0] + 1) if accel.size else None,
            increment_growth=float(np.diff(inc)[accel[0]]) if accel.size else None,
            linear_then_flat=ltf,
            saturation_n=saturation,
            n_95=n95,
            mu_0=float(mu[0]),
            mu_T=float(mu[T]),
            cumulative_T=float(inst.prefix[i, T]),
        ))
    table = pd.DataFrame(rows)
    assumptions = {
        "rising": bool(table.rising.all()),
        "concave": bool(table.concave.all()),
        "linear-then-flat": bool(table.linear_then_flat.all()),
        "means in [0, 1]": bool(means.min() >= 0 and means.max() <= 1),
    }
    theorems = {name: all(assumptions[a] for a in needs) for name, needs in THEOREMS.items()}
    best = int(np.argmax(table.cumulative_T.to_numpy()))
    return DiagnosisReport(T=T, table=table, optimal_arm=inst.names[best], assumptions=assumptions, theorems=theorems)
