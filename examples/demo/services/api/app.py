def health() -> dict[str, str]:
    return {"status": "ok"}
