from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("hello", "action", "ping", "batch")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    ping: Ping
    batch: BotBatch
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ..., batch: _Optional[_Union[BotBatch, _Mapping]] = ...) -> None: ...

class BotBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[BotMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[BotMessage, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "client", "max_matches", "batches")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    token: str
    client: str
    max_matches: int
    batches: bool
    def __init__(self, token: _Optional[str] = ..., client: _Optional[str] = ..., max_matches: _Optional[int] = ..., batches: _Optional[bool] = ...) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("match_id", "request_id", "action", "error")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    action: Action
    error: str
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "match_started", "decision", "rejected", "match_ended", "pong", "batch")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_started: MatchStarted
    decision: DecisionRequest
    rejected: ActionRejected
    match_ended: MatchEnded
    pong: Pong
    batch: RefereeBatch
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., batch: _Optional[_Union[RefereeBatch, _Mapping]] = ...) -> None: ...

class RefereeBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[RefereeMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[RefereeMessage, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("bot_id", "bot_name", "version", "max_message_bytes", "batches", "max_batch")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_MESSAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    bot_name: str
    version: int
    max_message_bytes: int
    batches: bool
    max_batch: int
    def __init__(self, bot_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., version: _Optional[int] = ..., max_message_bytes: _Optional[int] = ..., batches: _Optional[bool] = ..., max_batch: _Optional[int] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "game", "variants", "options", "seat", "players", "decision_ms", "time_bank_ms", "resumed")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    seat: int
    players: _containers.RepeatedScalarFieldContainer[str]
    decision_ms: int
    time_bank_ms: int
    resumed: bool
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[str]] = ..., decision_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., resumed: _Optional[bool] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "request_id", "seat", "kind", "observation", "options_json", "deadline_ms", "time_bank_ms", "attempt", "events_json")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    seat: int
    kind: str
    observation: Observation
    options_json: str
    deadline_ms: int
    time_bank_ms: int
    attempt: int
    events_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., seat: _Optional[int] = ..., kind: _Optional[str] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., options_json: _Optional[str] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., attempt: _Optional[int] = ..., events_json: _Optional[_Iterable[str]] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("match_id", "request_id", "reason", "allowed", "strikes")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: int
    reason: str
    allowed: str
    strikes: int
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[int] = ..., reason: _Optional[str] = ..., allowed: _Optional[str] = ..., strikes: _Optional[int] = ...) -> None: ...

class MatchEvents(_message.Message):
    __slots__ = ("match_id", "events_json", "view_json", "steps", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    VIEW_JSON_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    events_json: _containers.RepeatedScalarFieldContainer[str]
    view_json: str
    steps: int
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., events_json: _Optional[_Iterable[str]] = ..., view_json: _Optional[str] = ..., steps: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_id", "result", "seat", "events_json")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    result: Result
    seat: int
    events_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., result: _Optional[_Union[Result, _Mapping]] = ..., seat: _Optional[int] = ..., events_json: _Optional[_Iterable[str]] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class Result(_message.Message):
    __slots__ = ("reason", "places", "detail", "forfeits")
    REASON_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    places: _containers.RepeatedScalarFieldContainer[int]
    detail: str
    forfeits: _containers.RepeatedCompositeFieldContainer[Forfeit]
    def __init__(self, reason: _Optional[str] = ..., places: _Optional[_Iterable[int]] = ..., detail: _Optional[str] = ..., forfeits: _Optional[_Iterable[_Union[Forfeit, _Mapping]]] = ...) -> None: ...

class Forfeit(_message.Message):
    __slots__ = ("seat", "why")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    seat: int
    why: str
    def __init__(self, seat: _Optional[int] = ..., why: _Optional[str] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("risk", "stratego", "other_json")
    RISK_FIELD_NUMBER: _ClassVar[int]
    STRATEGO_FIELD_NUMBER: _ClassVar[int]
    OTHER_JSON_FIELD_NUMBER: _ClassVar[int]
    risk: RiskObservation
    stratego: StrategoObservation
    other_json: str
    def __init__(self, risk: _Optional[_Union[RiskObservation, _Mapping]] = ..., stratego: _Optional[_Union[StrategoObservation, _Mapping]] = ..., other_json: _Optional[str] = ...) -> None: ...

class RiskObservation(_message.Message):
    __slots__ = ("seat", "num_players", "num_owners", "passive", "map", "phase", "current_player", "turn", "round", "owner", "armies", "alive", "eliminated", "hand", "hand_sizes", "discard", "draw_pile_size", "sets_traded", "setup_armies_left", "reinforcements_left", "conquered_this_turn", "move_in", "attack", "mission", "colours", "headquarters", "headquarters_needed", "extra_json")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    NUM_OWNERS_FIELD_NUMBER: _ClassVar[int]
    PASSIVE_FIELD_NUMBER: _ClassVar[int]
    MAP_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_PLAYER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    ARMIES_FIELD_NUMBER: _ClassVar[int]
    ALIVE_FIELD_NUMBER: _ClassVar[int]
    ELIMINATED_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    SETS_TRADED_FIELD_NUMBER: _ClassVar[int]
    SETUP_ARMIES_LEFT_FIELD_NUMBER: _ClassVar[int]
    REINFORCEMENTS_LEFT_FIELD_NUMBER: _ClassVar[int]
    CONQUERED_THIS_TURN_FIELD_NUMBER: _ClassVar[int]
    MOVE_IN_FIELD_NUMBER: _ClassVar[int]
    ATTACK_FIELD_NUMBER: _ClassVar[int]
    MISSION_FIELD_NUMBER: _ClassVar[int]
    COLOURS_FIELD_NUMBER: _ClassVar[int]
    HEADQUARTERS_FIELD_NUMBER: _ClassVar[int]
    HEADQUARTERS_NEEDED_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    num_players: int
    num_owners: int
    passive: _containers.RepeatedScalarFieldContainer[bool]
    map: str
    phase: str
    current_player: int
    turn: int
    round: int
    owner: _containers.RepeatedScalarFieldContainer[int]
    armies: _containers.RepeatedScalarFieldContainer[int]
    alive: _containers.RepeatedScalarFieldContainer[bool]
    eliminated: _containers.RepeatedScalarFieldContainer[int]
    hand: _containers.RepeatedScalarFieldContainer[int]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    discard: _containers.RepeatedScalarFieldContainer[int]
    draw_pile_size: int
    sets_traded: int
    setup_armies_left: _containers.RepeatedScalarFieldContainer[int]
    reinforcements_left: int
    conquered_this_turn: bool
    move_in: RiskMoveIn
    attack: RiskAttack
    mission: RiskMission
    colours: _containers.RepeatedScalarFieldContainer[str]
    headquarters: _containers.RepeatedScalarFieldContainer[int]
    headquarters_needed: int
    extra_json: str
    def __init__(self, seat: _Optional[int] = ..., num_players: _Optional[int] = ..., num_owners: _Optional[int] = ..., passive: _Optional[_Iterable[bool]] = ..., map: _Optional[str] = ..., phase: _Optional[str] = ..., current_player: _Optional[int] = ..., turn: _Optional[int] = ..., round: _Optional[int] = ..., owner: _Optional[_Iterable[int]] = ..., armies: _Optional[_Iterable[int]] = ..., alive: _Optional[_Iterable[bool]] = ..., eliminated: _Optional[_Iterable[int]] = ..., hand: _Optional[_Iterable[int]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., discard: _Optional[_Iterable[int]] = ..., draw_pile_size: _Optional[int] = ..., sets_traded: _Optional[int] = ..., setup_armies_left: _Optional[_Iterable[int]] = ..., reinforcements_left: _Optional[int] = ..., conquered_this_turn: _Optional[bool] = ..., move_in: _Optional[_Union[RiskMoveIn, _Mapping]] = ..., attack: _Optional[_Union[RiskAttack, _Mapping]] = ..., mission: _Optional[_Union[RiskMission, _Mapping]] = ..., colours: _Optional[_Iterable[str]] = ..., headquarters: _Optional[_Iterable[int]] = ..., headquarters_needed: _Optional[int] = ..., extra_json: _Optional[str] = ...) -> None: ...

class RiskMoveIn(_message.Message):
    __slots__ = ("to", "min", "max")
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    to: int
    min: int
    max: int
    def __init__(self, to: _Optional[int] = ..., min: _Optional[int] = ..., max: _Optional[int] = ..., **kwargs) -> None: ...

class RiskAttack(_message.Message):
    __slots__ = ("attacker", "to", "dice", "rolls")
    ATTACKER_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    DICE_FIELD_NUMBER: _ClassVar[int]
    ROLLS_FIELD_NUMBER: _ClassVar[int]
    attacker: int
    to: int
    dice: int
    rolls: str
    def __init__(self, attacker: _Optional[int] = ..., to: _Optional[int] = ..., dice: _Optional[int] = ..., rolls: _Optional[str] = ..., **kwargs) -> None: ...

class RiskMission(_message.Message):
    __slots__ = ("id", "text", "continents", "third_continent", "occupy", "min_armies", "destroy")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTINENTS_FIELD_NUMBER: _ClassVar[int]
    THIRD_CONTINENT_FIELD_NUMBER: _ClassVar[int]
    OCCUPY_FIELD_NUMBER: _ClassVar[int]
    MIN_ARMIES_FIELD_NUMBER: _ClassVar[int]
    DESTROY_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    continents: _containers.RepeatedScalarFieldContainer[str]
    third_continent: bool
    occupy: int
    min_armies: int
    destroy: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., continents: _Optional[_Iterable[str]] = ..., third_continent: _Optional[bool] = ..., occupy: _Optional[int] = ..., min_armies: _Optional[int] = ..., destroy: _Optional[str] = ...) -> None: ...

class StrategoObservation(_message.Message):
    __slots__ = ("seat", "rules", "phase", "current_player", "ply", "board", "lakes", "captured", "history", "rescues_left", "extra_json")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_PLAYER_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    LAKES_FIELD_NUMBER: _ClassVar[int]
    CAPTURED_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    RESCUES_LEFT_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    rules: str
    phase: str
    current_player: int
    ply: int
    board: _containers.RepeatedCompositeFieldContainer[StrategoSquare]
    lakes: _containers.RepeatedScalarFieldContainer[int]
    captured: _containers.RepeatedCompositeFieldContainer[StrategoLost]
    history: _containers.RepeatedCompositeFieldContainer[StrategoMove]
    rescues_left: _containers.RepeatedScalarFieldContainer[int]
    extra_json: str
    def __init__(self, seat: _Optional[int] = ..., rules: _Optional[str] = ..., phase: _Optional[str] = ..., current_player: _Optional[int] = ..., ply: _Optional[int] = ..., board: _Optional[_Iterable[_Union[StrategoSquare, _Mapping]]] = ..., lakes: _Optional[_Iterable[int]] = ..., captured: _Optional[_Iterable[_Union[StrategoLost, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[StrategoMove, _Mapping]]] = ..., rescues_left: _Optional[_Iterable[int]] = ..., extra_json: _Optional[str] = ...) -> None: ...

class StrategoSquare(_message.Message):
    __slots__ = ("occupied", "owner", "rank", "moved", "moved_far", "revealed")
    OCCUPIED_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    MOVED_FIELD_NUMBER: _ClassVar[int]
    MOVED_FAR_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    occupied: bool
    owner: int
    rank: str
    moved: bool
    moved_far: bool
    revealed: bool
    def __init__(self, occupied: _Optional[bool] = ..., owner: _Optional[int] = ..., rank: _Optional[str] = ..., moved: _Optional[bool] = ..., moved_far: _Optional[bool] = ..., revealed: _Optional[bool] = ...) -> None: ...

class StrategoLost(_message.Message):
    __slots__ = ("ranks",)
    RANKS_FIELD_NUMBER: _ClassVar[int]
    ranks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ranks: _Optional[_Iterable[str]] = ...) -> None: ...

class StrategoMove(_message.Message):
    __slots__ = ("p", "to", "attacker", "defender", "result", "rescue", "square")
    P_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    ATTACKER_FIELD_NUMBER: _ClassVar[int]
    DEFENDER_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RESCUE_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    p: int
    to: int
    attacker: str
    defender: str
    result: str
    rescue: str
    square: int
    def __init__(self, p: _Optional[int] = ..., to: _Optional[int] = ..., attacker: _Optional[str] = ..., defender: _Optional[str] = ..., result: _Optional[str] = ..., rescue: _Optional[str] = ..., square: _Optional[int] = ..., **kwargs) -> None: ...

class Action(_message.Message):
    __slots__ = ("risk", "stratego", "other_json")
    RISK_FIELD_NUMBER: _ClassVar[int]
    STRATEGO_FIELD_NUMBER: _ClassVar[int]
    OTHER_JSON_FIELD_NUMBER: _ClassVar[int]
    risk: RiskAction
    stratego: StrategoAction
    other_json: str
    def __init__(self, risk: _Optional[_Union[RiskAction, _Mapping]] = ..., stratego: _Optional[_Union[StrategoAction, _Mapping]] = ..., other_json: _Optional[str] = ...) -> None: ...

class RiskAction(_message.Message):
    __slots__ = ("type", "territory", "cards", "bonus", "placements", "to", "dice", "until", "armies", "neutral")
    class PlacementsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TERRITORY_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    BONUS_FIELD_NUMBER: _ClassVar[int]
    PLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    DICE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    ARMIES_FIELD_NUMBER: _ClassVar[int]
    NEUTRAL_FIELD_NUMBER: _ClassVar[int]
    type: str
    territory: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    bonus: int
    placements: _containers.ScalarMap[int, int]
    to: int
    dice: int
    until: int
    armies: int
    neutral: int
    def __init__(self, type: _Optional[str] = ..., territory: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., bonus: _Optional[int] = ..., placements: _Optional[_Mapping[int, int]] = ..., to: _Optional[int] = ..., dice: _Optional[int] = ..., until: _Optional[int] = ..., armies: _Optional[int] = ..., neutral: _Optional[int] = ..., **kwargs) -> None: ...

class StrategoAction(_message.Message):
    __slots__ = ("type", "placement", "to", "piece", "square")
    class PlacementEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    PIECE_FIELD_NUMBER: _ClassVar[int]
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    type: str
    placement: _containers.ScalarMap[int, str]
    to: int
    piece: str
    square: int
    def __init__(self, type: _Optional[str] = ..., placement: _Optional[_Mapping[int, str]] = ..., to: _Optional[int] = ..., piece: _Optional[str] = ..., square: _Optional[int] = ..., **kwargs) -> None: ...

class RegisterBotRequest(_message.Message):
    __slots__ = ("name", "registration_key", "games", "new_version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REGISTRATION_KEY_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    registration_key: str
    games: _containers.RepeatedScalarFieldContainer[str]
    new_version: bool
    def __init__(self, name: _Optional[str] = ..., registration_key: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ..., new_version: _Optional[bool] = ...) -> None: ...

class RegisterBotResponse(_message.Message):
    __slots__ = ("bot_id", "name", "version", "token")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    name: str
    version: int
    token: str
    def __init__(self, bot_id: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[int] = ..., token: _Optional[str] = ...) -> None: ...

class SubmitBotChunk(_message.Message):
    __slots__ = ("header", "data")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    header: SubmitBotHeader
    data: bytes
    def __init__(self, header: _Optional[_Union[SubmitBotHeader, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class SubmitBotHeader(_message.Message):
    __slots__ = ("name", "token", "registration_key", "filename", "size", "games")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    REGISTRATION_KEY_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    name: str
    token: str
    registration_key: str
    filename: str
    size: int
    games: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., token: _Optional[str] = ..., registration_key: _Optional[str] = ..., filename: _Optional[str] = ..., size: _Optional[int] = ..., games: _Optional[_Iterable[str]] = ...) -> None: ...

class SubmitBotResponse(_message.Message):
    __slots__ = ("bot_id", "name", "version", "digest", "new_version", "token", "games")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    name: str
    version: int
    digest: str
    new_version: bool
    token: str
    games: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, bot_id: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[int] = ..., digest: _Optional[str] = ..., new_version: _Optional[bool] = ..., token: _Optional[str] = ..., games: _Optional[_Iterable[str]] = ...) -> None: ...

class GetBotLogRequest(_message.Message):
    __slots__ = ("token", "match_id", "seat")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    token: str
    match_id: str
    seat: int
    def __init__(self, token: _Optional[str] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class GetBotLogResponse(_message.Message):
    __slots__ = ("stderr",)
    STDERR_FIELD_NUMBER: _ClassVar[int]
    stderr: bytes
    def __init__(self, stderr: _Optional[bytes] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BotInfo(_message.Message):
    __slots__ = ("bot_id", "name", "version", "connected", "revoked", "games", "kind", "digest", "size", "created")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    name: str
    version: int
    connected: bool
    revoked: bool
    games: _containers.RepeatedScalarFieldContainer[str]
    kind: str
    digest: str
    size: int
    created: str
    def __init__(self, bot_id: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[int] = ..., connected: _Optional[bool] = ..., revoked: _Optional[bool] = ..., games: _Optional[_Iterable[str]] = ..., kind: _Optional[str] = ..., digest: _Optional[str] = ..., size: _Optional[int] = ..., created: _Optional[str] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[BotInfo]
    def __init__(self, bots: _Optional[_Iterable[_Union[BotInfo, _Mapping]]] = ...) -> None: ...

class RevokeBotRequest(_message.Message):
    __slots__ = ("bot_id",)
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    bot_id: str
    def __init__(self, bot_id: _Optional[str] = ...) -> None: ...

class RevokeBotResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunMatchRequest(_message.Message):
    __slots__ = ("game", "variants", "options", "players", "seed", "match_id", "wait", "decision_ms", "time_bank_ms", "deal_seed")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    DEAL_SEED_FIELD_NUMBER: _ClassVar[int]
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    players: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    match_id: str
    wait: bool
    decision_ms: int
    time_bank_ms: int
    deal_seed: int
    def __init__(self, game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., players: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., match_id: _Optional[str] = ..., wait: _Optional[bool] = ..., decision_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., deal_seed: _Optional[int] = ...) -> None: ...

class RunMatchResponse(_message.Message):
    __slots__ = ("match_id", "match")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    match: MatchInfo
    def __init__(self, match_id: _Optional[str] = ..., match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("match_id", "status", "game", "players", "result", "replay_json", "seed", "deal_seed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DEAL_SEED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: str
    game: str
    players: _containers.RepeatedScalarFieldContainer[str]
    result: Result
    replay_json: str
    seed: int
    deal_seed: int
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[str] = ..., game: _Optional[str] = ..., players: _Optional[_Iterable[str]] = ..., result: _Optional[_Union[Result, _Mapping]] = ..., replay_json: _Optional[str] = ..., seed: _Optional[int] = ..., deal_seed: _Optional[int] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id", "batches", "without_replay")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    WITHOUT_REPLAY_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    batches: bool
    without_replay: bool
    def __init__(self, match_id: _Optional[str] = ..., batches: _Optional[bool] = ..., without_replay: _Optional[bool] = ...) -> None: ...

class SpectatorBatch(_message.Message):
    __slots__ = ("steps",)
    STEPS_FIELD_NUMBER: _ClassVar[int]
    steps: _containers.RepeatedCompositeFieldContainer[MatchEvents]
    def __init__(self, steps: _Optional[_Iterable[_Union[MatchEvents, _Mapping]]] = ...) -> None: ...

class SpectatorMessage(_message.Message):
    __slots__ = ("events", "finished", "batch")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    events: MatchEvents
    finished: MatchInfo
    batch: SpectatorBatch
    def __init__(self, events: _Optional[_Union[MatchEvents, _Mapping]] = ..., finished: _Optional[_Union[MatchInfo, _Mapping]] = ..., batch: _Optional[_Union[SpectatorBatch, _Mapping]] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("name", "game", "variants", "options", "bots", "seats", "games_per_pairing", "seed", "challenger", "decision_ms", "time_bank_ms", "start")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_PAIRING_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    name: str
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    bots: _containers.RepeatedScalarFieldContainer[str]
    seats: int
    games_per_pairing: int
    seed: int
    challenger: str
    decision_ms: int
    time_bank_ms: int
    start: bool
    def __init__(self, name: _Optional[str] = ..., game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., bots: _Optional[_Iterable[str]] = ..., seats: _Optional[int] = ..., games_per_pairing: _Optional[int] = ..., seed: _Optional[int] = ..., challenger: _Optional[str] = ..., decision_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., start: _Optional[bool] = ...) -> None: ...

class StartTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class StopTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("tournament_id", "standings")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    standings: bool
    def __init__(self, tournament_id: _Optional[str] = ..., standings: _Optional[bool] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments",)
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[TournamentInfo]
    def __init__(self, tournaments: _Optional[_Iterable[_Union[TournamentInfo, _Mapping]]] = ...) -> None: ...

class TournamentInfo(_message.Message):
    __slots__ = ("tournament_id", "name", "game", "variants", "options", "format", "seats", "games_per_pairing", "seed", "status", "bots", "matches", "finished", "pending", "running", "aborted", "failed", "created", "standings")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_PAIRING_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    ABORTED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    name: str
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    format: str
    seats: int
    games_per_pairing: int
    seed: int
    status: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    matches: int
    finished: int
    pending: int
    running: int
    aborted: int
    failed: int
    created: str
    standings: Leaderboard
    def __init__(self, tournament_id: _Optional[str] = ..., name: _Optional[str] = ..., game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., format: _Optional[str] = ..., seats: _Optional[int] = ..., games_per_pairing: _Optional[int] = ..., seed: _Optional[int] = ..., status: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., matches: _Optional[int] = ..., finished: _Optional[int] = ..., pending: _Optional[int] = ..., running: _Optional[int] = ..., aborted: _Optional[int] = ..., failed: _Optional[int] = ..., created: _Optional[str] = ..., standings: _Optional[_Union[Leaderboard, _Mapping]] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("game", "variants", "tournament_id", "options")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    tournament_id: str
    options: _containers.ScalarMap[str, str]
    def __init__(self, game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., tournament_id: _Optional[str] = ..., options: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Leaderboard(_message.Message):
    __slots__ = ("game", "variants", "rows", "options", "board")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    rows: _containers.RepeatedCompositeFieldContainer[LeaderboardRow]
    options: _containers.ScalarMap[str, str]
    board: str
    def __init__(self, game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., rows: _Optional[_Iterable[_Union[LeaderboardRow, _Mapping]]] = ..., options: _Optional[_Mapping[str, str]] = ..., board: _Optional[str] = ...) -> None: ...

class LeaderboardRow(_message.Message):
    __slots__ = ("rank", "bot_id", "bot", "games", "wins", "draws", "losses", "score", "elo", "elo_low", "elo_high", "online_elo", "openskill_mu", "openskill_sigma")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    LOSSES_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ELO_FIELD_NUMBER: _ClassVar[int]
    ELO_LOW_FIELD_NUMBER: _ClassVar[int]
    ELO_HIGH_FIELD_NUMBER: _ClassVar[int]
    ONLINE_ELO_FIELD_NUMBER: _ClassVar[int]
    OPENSKILL_MU_FIELD_NUMBER: _ClassVar[int]
    OPENSKILL_SIGMA_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot_id: str
    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    elo: float
    elo_low: float
    elo_high: float
    online_elo: float
    openskill_mu: float
    openskill_sigma: float
    def __init__(self, rank: _Optional[int] = ..., bot_id: _Optional[str] = ..., bot: _Optional[str] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., draws: _Optional[int] = ..., losses: _Optional[int] = ..., score: _Optional[float] = ..., elo: _Optional[float] = ..., elo_low: _Optional[float] = ..., elo_high: _Optional[float] = ..., online_elo: _Optional[float] = ..., openskill_mu: _Optional[float] = ..., openskill_sigma: _Optional[float] = ...) -> None: ...

class ListRecurringRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListRecurringResponse(_message.Message):
    __slots__ = ("recurring",)
    RECURRING_FIELD_NUMBER: _ClassVar[int]
    recurring: _containers.RepeatedCompositeFieldContainer[RecurringInfo]
    def __init__(self, recurring: _Optional[_Iterable[_Union[RecurringInfo, _Mapping]]] = ...) -> None: ...

class PauseRecurringRequest(_message.Message):
    __slots__ = ("recurring_id",)
    RECURRING_ID_FIELD_NUMBER: _ClassVar[int]
    recurring_id: str
    def __init__(self, recurring_id: _Optional[str] = ...) -> None: ...

class ResumeRecurringRequest(_message.Message):
    __slots__ = ("recurring_id",)
    RECURRING_ID_FIELD_NUMBER: _ClassVar[int]
    recurring_id: str
    def __init__(self, recurring_id: _Optional[str] = ...) -> None: ...

class DeleteRecurringRequest(_message.Message):
    __slots__ = ("recurring_id",)
    RECURRING_ID_FIELD_NUMBER: _ClassVar[int]
    recurring_id: str
    def __init__(self, recurring_id: _Optional[str] = ...) -> None: ...

class RecurringInfo(_message.Message):
    __slots__ = ("recurring_id", "name", "game", "variants", "options", "seats", "games_per_pairing", "house_bots", "every_s", "next_run", "runs", "last_tournament_id", "paused")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RECURRING_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    VARIANTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_PAIRING_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    EVERY_S_FIELD_NUMBER: _ClassVar[int]
    NEXT_RUN_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    LAST_TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    recurring_id: str
    name: str
    game: str
    variants: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    seats: int
    games_per_pairing: int
    house_bots: _containers.RepeatedScalarFieldContainer[str]
    every_s: int
    next_run: str
    runs: int
    last_tournament_id: str
    paused: bool
    def __init__(self, recurring_id: _Optional[str] = ..., name: _Optional[str] = ..., game: _Optional[str] = ..., variants: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., seats: _Optional[int] = ..., games_per_pairing: _Optional[int] = ..., house_bots: _Optional[_Iterable[str]] = ..., every_s: _Optional[int] = ..., next_run: _Optional[str] = ..., runs: _Optional[int] = ..., last_tournament_id: _Optional[str] = ..., paused: _Optional[bool] = ...) -> None: ...
