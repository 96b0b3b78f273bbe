"""Bot tokens: shown once, stored hashed, safe to pass on a command line."""

from arena.store import Store, hash_token


def test_tokens_are_stored_hashed_and_never_look_like_an_option(tmp_path):
    store = Store(str(tmp_path / "t.db"))
    for i in range(300):  # token_urlsafe starts with "-" about once in 64
        bot, token = store.register_bot(f"bot-{i}")
        assert token.startswith("arena_") and not token.startswith("-")
        assert bot.token_hash == hash_token(token) and token not in bot.token_hash
        assert store.bot_by_token(token).id == bot.id
    assert store.bot_by_token("arena_nope") is None
