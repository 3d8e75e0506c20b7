"""Mutations. Each validates fully before writing; errors come back in the payload."""

from __future__ import annotations

from typing import Annotated

import strawberry
from strawberry.types import Info

from dynamo.errors import LeaderboardError
from gql.errors import user_errors
from gql.families import LeaderboardFamily
from gql.inputs import (
    ClaimRewardInput,
    CreateLeaderboardFamilyInput,
    CreateLeaderboardInput,
    CreatePlayerInput,
    RenamePlayerInput,
    SubmitScoreInput,
    UpdateLeaderboardFamilyInput,
    tier_arguments,
)
from gql.leaderboards import Leaderboard
from gql.moderation import (
    BanPlayerInput,
    BanPlayerPayload,
    Erased,
    ErasePlayerInput,
    ErasePlayerPayload,
    ModerationAction,
    RemoveEntryInput,
    RemoveEntryPayload,
    UnbanPlayerInput,
    UnbanPlayerPayload,
)
from gql.payloads import (
    CreateLeaderboardFamilyPayload,
    CreateLeaderboardPayload,
    CreatePlayerPayload,
    RenamePlayerPayload,
    SubmitScorePayload,
    UpdateLeaderboardFamilyPayload,
)
from gql.players import Player
from gql.rewards import ClaimRewardPayload, RewardClaim
from resolvers import claims, families, leaderboards, moderation, players, plays
from resolvers.auth import require_admin, require_authenticated
from resolvers.context import Context
from resolvers.plays import PlayArguments

__all__ = ["Mutation"]

INPUT = strawberry.argument(description="What to write.")


@strawberry.type(
    description="Writes. Each needs an API key (Authorization: Bearer <key>; without one, an "
    "UNAUTHENTICATED error) and validates fully before writing anything."
)
class Mutation:
    @strawberry.mutation(description="Create a player.")
    async def create_player(
        self, info: Info[Context, None], input: Annotated[CreatePlayerInput, INPUT]
    ) -> CreatePlayerPayload:
        require_authenticated(info.context)
        try:
            player_id = str(input.id) if input.id is not None else None
            player = await players.create_player(info.context, player_id, input.name, input.email)
        except LeaderboardError as error:
            return CreatePlayerPayload(player=None, errors=user_errors(error))
        return CreatePlayerPayload(player=Player.of(player), errors=[])

    @strawberry.mutation(
        description="Give a player a new name. Its entries show it from when this answers "
        "with complete true: each entry keeps a copy of its player's name, so that a page of "
        "a board shows its players' names without reading each player, and a rename writes "
        "the new name into every entry of the player (its final results read it from the "
        "player). Plays racing the rename write the new name. Renaming a player to the name "
        "it has writes nothing, unless a rename to it is still under way: then that goes on."
    )
    async def rename_player(
        self, info: Info[Context, None], input: Annotated[RenamePlayerInput, INPUT]
    ) -> RenamePlayerPayload:
        require_authenticated(info.context)
        try:
            result = await players.rename_player(info.context, str(input.player_id), input.name)
        except LeaderboardError as error:
            return RenamePlayerPayload(player=None, complete=False, errors=user_errors(error))
        return RenamePlayerPayload(
            player=Player.of(result.player), complete=result.complete, errors=[]
        )

    @strawberry.mutation(description="Create a leaderboard.")
    async def create_leaderboard(
        self, info: Info[Context, None], input: Annotated[CreateLeaderboardInput, INPUT]
    ) -> CreateLeaderboardPayload:
        require_authenticated(info.context)
        try:
            board = await leaderboards.create_leaderboard(
                info.context,
                leaderboard_id=str(input.id),
                name=input.name,
                period=input.period,
                sort_order=input.sort_order,
                operator=input.operator,
                score_width=input.score_width,
                starts_at=input.starts_at,
                ends_at=input.ends_at,
                min_score=input.min_score,
                max_score=input.max_score,
                partitions=input.partitions,
                archive_days=input.archive_days,
                reward_tiers=tier_arguments(input.reward_tiers),
            )
        except LeaderboardError as error:
            return CreateLeaderboardPayload(leaderboard=None, errors=user_errors(error))
        return CreateLeaderboardPayload(leaderboard=Leaderboard(item=board), errors=[])

    @strawberry.mutation(description="Create a periodic leaderboard family.")
    async def create_leaderboard_family(
        self, info: Info[Context, None], input: Annotated[CreateLeaderboardFamilyInput, INPUT]
    ) -> CreateLeaderboardFamilyPayload:
        require_authenticated(info.context)
        try:
            family = await families.create_family(
                info.context,
                family_id=str(input.id),
                name=input.name,
                period=input.period,
                timezone=input.timezone,
                sort_order=input.sort_order,
                operator=input.operator,
                score_width=input.score_width,
                season_start=input.season_start,
                season_days=input.season_days,
                retention_days=input.retention_days,
                min_score=input.min_score,
                max_score=input.max_score,
                partitions=input.partitions,
                archive_days=input.archive_days,
                reward_tiers=tier_arguments(input.reward_tiers),
            )
        except LeaderboardError as error:
            return CreateLeaderboardFamilyPayload(family=None, errors=user_errors(error))
        return CreateLeaderboardFamilyPayload(
            family=LeaderboardFamily(item=family, fresh=True), errors=[]
        )

    @strawberry.mutation(
        description="Change a periodic leaderboard family: the partitions of its boards created "
        "from now on."
    )
    async def update_leaderboard_family(
        self, info: Info[Context, None], input: Annotated[UpdateLeaderboardFamilyInput, INPUT]
    ) -> UpdateLeaderboardFamilyPayload:
        require_authenticated(info.context)
        try:
            family = await families.update_family(
                info.context, family_id=str(input.id), partitions=input.partitions
            )
        except LeaderboardError as error:
            return UpdateLeaderboardFamilyPayload(family=None, errors=user_errors(error))
        return UpdateLeaderboardFamilyPayload(
            family=LeaderboardFamily(item=family, fresh=True), errors=[]
        )

    @strawberry.mutation(
        description="Record one play: a session, the player's statistics, and the entry on each "
        "board named, all in one transaction. Nothing is written unless all of it is."
    )
    async def submit_score(
        self, info: Info[Context, None], input: Annotated[SubmitScoreInput, INPUT]
    ) -> SubmitScorePayload:
        require_authenticated(info.context)
        args = PlayArguments(
            player_id=str(input.player_id),
            game_id=str(input.game_id),
            score=int(input.score),
            leaderboard_id=str(input.leaderboard_id) if input.leaderboard_id is not None else None,
            leaderboard_ids=tuple(str(b) for b in input.leaderboard_ids or []),
            family_ids=tuple(str(f) for f in input.family_ids or []),
            duration_sec=input.duration_sec,
            submission_id=str(input.submission_id) if input.submission_id is not None else None,
            metadata=input.metadata,
        )
        try:
            result = await plays.submit_score(info.context, args)
        except LeaderboardError as error:
            return SubmitScorePayload(result=None, errors=user_errors(error))
        return SubmitScorePayload(result=result, errors=[])

    @strawberry.mutation(
        description="Claim the reward of a player's final result on a FINAL board, for a game "
        "server that grants the reward's items (a game-server or admin key; the claim records "
        "the key's fingerprint). Of any number of claims of one result, concurrent or not, "
        "exactly one writes the claim and answers it with no error; every other answers "
        "ALREADY_CLAIMED with that first claim (its claimedAt included) and writes nothing, so "
        "a game server that grants the items on a claim without errors alone grants them once. "
        "NO_REWARD at playerId, nothing written, when there is nothing to claim: the board is "
        "not FINAL (no result yet), the player had no entry on it (or was erased), or its "
        "result is in no reward tier."
    )
    async def claim_reward(
        self, info: Info[Context, None], input: Annotated[ClaimRewardInput, INPUT]
    ) -> ClaimRewardPayload:
        require_authenticated(info.context)
        try:
            outcome = await claims.claim_reward(
                info.context, str(input.leaderboard_id), str(input.player_id)
            )
        except LeaderboardError as error:
            return ClaimRewardPayload(claim=None, errors=user_errors(error))
        claim = RewardClaim.of(outcome.claim)
        if outcome.first:
            return ClaimRewardPayload(claim=claim, errors=[])
        return ClaimRewardPayload(
            claim=claim, errors=user_errors(claims.already_claimed(outcome.claim))
        )

    @strawberry.mutation(
        description="Take a player's entry off a board (admin key): its Score item goes, the "
        "board's entryCount drops by one and the moderation log records the action, in one "
        "transaction. The player's later plays may enter the board again."
    )
    async def remove_entry(
        self, info: Info[Context, None], input: Annotated[RemoveEntryInput, INPUT]
    ) -> RemoveEntryPayload:
        require_admin(info.context)
        try:
            removed = await moderation.remove_entry(
                info.context, str(input.leaderboard_id), str(input.player_id), input.reason
            )
        except LeaderboardError as error:
            return RemoveEntryPayload(removed=None, action=None, errors=user_errors(error))
        action = ModerationAction.of(removed)
        return RemoveEntryPayload(removed=action.removed[0], action=action, errors=[])

    @strawberry.mutation(
        description="Ban a player (admin key): its plays are refused with PLAYER_BANNED from "
        "the moment the ban is written (a play racing it included), and its entries are taken "
        "off every board it is on, in bounded transactions. When it answers, the player has no "
        "entry anywhere. Safe to send again: a ban that failed part-way completes."
    )
    async def ban_player(
        self, info: Info[Context, None], input: Annotated[BanPlayerInput, INPUT]
    ) -> BanPlayerPayload:
        require_admin(info.context)
        try:
            result = await moderation.ban_player(info.context, str(input.player_id), input.reason)
        except LeaderboardError as error:
            return BanPlayerPayload(action=None, errors=user_errors(error))
        return BanPlayerPayload(action=ModerationAction.of(result.action), errors=[])

    @strawberry.mutation(
        description="Lift a player's ban (admin key): its plays are accepted again. Entries "
        "the ban removed stay removed."
    )
    async def unban_player(
        self, info: Info[Context, None], input: Annotated[UnbanPlayerInput, INPUT]
    ) -> UnbanPlayerPayload:
        require_admin(info.context)
        try:
            action = await moderation.unban_player(info.context, str(input.player_id), input.reason)
        except LeaderboardError as error:
            return UnbanPlayerPayload(action=None, errors=user_errors(error))
        return UnbanPlayerPayload(action=ModerationAction.of(action), errors=[])

    @strawberry.mutation(
        description="Erase a player's data (admin key): the player, its e-mail address, its "
        "sessions, entries and play records; each board's entryCount follows, and moderation "
        "records stop naming it. A large erasure may take several calls: while complete is "
        "false, send it again."
    )
    async def erase_player(
        self, info: Info[Context, None], input: Annotated[ErasePlayerInput, INPUT]
    ) -> ErasePlayerPayload:
        require_admin(info.context)
        try:
            result = await moderation.erase_player(info.context, str(input.player_id), input.reason)
        except LeaderboardError as error:
            return ErasePlayerPayload(
                complete=False, erased=None, action=None, errors=user_errors(error)
            )
        action = ModerationAction.of(result.action) if result.action is not None else None
        return ErasePlayerPayload(
            complete=result.complete,
            erased=Erased.of(result.progress),
            action=action,
            errors=[],
        )
