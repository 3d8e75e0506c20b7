"""What request units and storage cost on AWS: the price table used, and the cost of a million
requests of a given average.

Prices for us-east-1 as AWS published them after the on-demand price cut of 1 November 2024
(aws.amazon.com/dynamodb/pricing): on-demand $0.125 per million read request units and $0.625
per million write request units (global secondary index writes are write request units too);
provisioned $0.00013 per RCU-hour and $0.00065 per WCU-hour; Standard table class storage
$0.25 per GB-month (the first 25 GB free, not deducted here); DynamoDB Streams $0.02 per
100,000 GetRecords read request units, free when a Lambda trigger reads the stream.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PRICES", "PRICES_AS_OF", "mix_cost", "storage_cost"]

PRICES_AS_OF = "2024-11-01"
PRICES: dict[str, float] = {
    "on_demand_read_per_million": 0.125,
    "on_demand_write_per_million": 0.625,
    "provisioned_rcu_hour": 0.00013,
    "provisioned_wcu_hour": 0.00065,
    "storage_gb_month": 0.25,
    "stream_read_per_100k": 0.02,
}
"""US dollars, us-east-1."""

PROVISIONED_UTILISATION = 0.7
"""The share of provisioned capacity a table uses on average (auto scaling's default target)."""

_SECONDS_PER_HOUR = 3600.0


def mix_cost(read_units: float, write_units: float) -> dict[str, Any]:
    """The cost of one million requests averaging ``read_units`` and ``write_units`` (table and
    index writes together): on demand, and provisioned at :data:`PROVISIONED_UTILISATION`."""
    on_demand_read = read_units * PRICES["on_demand_read_per_million"]
    on_demand_write = write_units * PRICES["on_demand_write_per_million"]
    hours = 1e6 / _SECONDS_PER_HOUR / PROVISIONED_UTILISATION
    provisioned_read = read_units * hours * PRICES["provisioned_rcu_hour"]
    provisioned_write = write_units * hours * PRICES["provisioned_wcu_hour"]
    return {
        "on_demand": {
            "read": round(on_demand_read, 4),
            "write": round(on_demand_write, 4),
            "total": round(on_demand_read + on_demand_write, 4),
        },
        "provisioned": {
            "utilisation": PROVISIONED_UTILISATION,
            "read": round(provisioned_read, 4),
            "write": round(provisioned_write, 4),
            "total": round(provisioned_read + provisioned_write, 4),
        },
    }


def storage_cost(bytes_per_player: float, players: int = 1_000_000) -> float:
    """Dollars a month to store ``players`` players at ``bytes_per_player``."""
    return bytes_per_player * players / 2**30 * PRICES["storage_gb_month"]
