"""The one policy base: registration into each family's registry, the duplicate-name error, labels, make, _check."""
from dataclasses import dataclass
from typing import ClassVar

import pytest

from horizonbandits.commit import COMMIT_POLICIES, RAEC, CommitPolicy, PortfolioPolicy
from horizonbandits.commit.policies.base import register_portfolio_policy
from horizonbandits.errors import check_choice, check_real
from horizonbandits.policy_base import Policy, make
from horizonbandits.rising.policies import POLICIES, CureUCB, RisingPolicy, make_policy


def test_every_family_derives_from_the_one_base():
    import horizonbandits.commit as commit
    for registry, base in ((POLICIES, RisingPolicy), (COMMIT_POLICIES, CommitPolicy),
                           (commit.PORTFOLIO_POLICIES, PortfolioPolicy)):
        assert registry and all(issubclass(cls, base) and issubclass(cls, Policy) for cls in registry.values())
    assert set(commit.PORTFOLIO_POLICIES) == {"ROSCOC", "UCB-Portfolio"}
    assert not set(POLICIES) & set(COMMIT_POLICIES)  # each family files only into its own registry


def test_a_named_subclass_registers_itself_in_its_family_only(monkeypatch):
    monkeypatch.setattr(PortfolioPolicy, "_registry", registry := {})  # a private registry for this test

    @dataclass(frozen=True)
    class Demo(PortfolioPolicy):
        level: float = 1.0
        name: ClassVar[str] = "Demo"

    assert registry == {"Demo": Demo} and "Demo" not in COMMIT_POLICIES and "Demo" not in POLICIES
    with pytest.raises(RuntimeError, match="two portfolio policies are named 'Demo'"):
        @dataclass(frozen=True)
        class Other(PortfolioPolicy):
            name: ClassVar[str] = "Demo"
    assert make(registry, "Demo", level=2.0) == Demo(level=2.0)


def test_duplicate_names_are_refused_with_the_familys_words():
    with pytest.raises(RuntimeError, match="two policies are named 'CURE-UCB'"):
        type("CureAgain", (RisingPolicy,), {"name": "CURE-UCB"})
    with pytest.raises(RuntimeError, match="two commitment policies are named 'RAEC'"):
        type("RaecAgain", (CommitPolicy,), {"name": "RAEC"})
    with pytest.raises(RuntimeError, match="portfolio policy Nameless has no display name"):
        register_portfolio_policy(type("Nameless", (), {"name": ""}))
    assert POLICIES["CURE-UCB"] is CureUCB and COMMIT_POLICIES["RAEC"] is RAEC


def test_labels_keep_their_format():
    assert CureUCB().label == "CURE-UCB" and CureUCB(eps=0.5).label == "CURE-UCB(eps=0.5)"
    assert RAEC(commit="empirical").label == "RAEC(commit='empirical')"
    import horizonbandits.commit as commit
    assert commit.ROSCOC(stage1_scale=0.5).label == "ROSCOC(stage1_scale=0.5)"
    assert commit.UCBPortfolio().label == "UCB-Portfolio"

    @dataclass(frozen=True)
    class Required(Policy):  # a field without a default is always listed
        window: int
        scale: float = 1.0
        name: ClassVar[str] = "Req"

    assert Required(5).label == "Req(window=5)" and Required(5, 2.0).label == "Req(window=5, scale=2.0)"


def test_make_and_the_one_line_errors():
    assert make_policy("CURE-UCB", eps=0.5) == CureUCB(eps=0.5)
    with pytest.raises(ValueError, match=r"^policy='CURE' is not allowed: expected one of CURE-UCB, ") as err:
        make_policy("CURE")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="policy='ROSCOC' is not allowed"):
        make(COMMIT_POLICIES, "ROSCOC")


def test_check_normalises_validates_and_lets_optional_none_through():
    @dataclass(frozen=True)
    class Checked(Policy):
        scale: float = 1
        gamma: float | None = None
        mode: str = "a"

        def __post_init__(self):
            self._check("scale", check_real, 0.0, lo_open=True)
            self._check("gamma", check_real, 0.0, optional=True)
            self._check("mode", check_choice, ("a", "b"))

    assert type(Checked().scale) is float and Checked().gamma is None and Checked(gamma=2).gamma == 2.0
    with pytest.raises(ValueError, match=r"^scale=0 is not allowed: expected a number > 0.0$"):
        Checked(scale=0)
    with pytest.raises(ValueError, match="mode='c' is not allowed"):
        Checked(mode="c")
