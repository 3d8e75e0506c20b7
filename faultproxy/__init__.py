"""A fault-injecting HTTP proxy in front of DynamoDB Local, for the tests and the benchmarks
(not part of the service: it is not in the wheel or the image).

``FaultProxy`` forwards DynamoDB's HTTP API, injecting the faults its ``Rule`` s ask for
(``faultproxy.proxy``), and, on demand, applies DynamoDB's transaction-conflict rule that
DynamoDB Local lacks (``faultproxy.conflicts``).
"""

from faultproxy.conflicts import ItemKey, TransactionConflicts
from faultproxy.proxy import Fault, FaultProxy, Rule

__all__ = ["Fault", "FaultProxy", "ItemKey", "Rule", "TransactionConflicts"]
