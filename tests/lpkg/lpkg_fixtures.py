"""Hand-made graphs for the LPKG tests (see conftest.py)."""

PATTERN_TRIPLETS = [
    ("Alice", "knows", "Bob"), ("Alice", "knows", "Carol"), ("Bob", "knows", "Dave"),
    ("Carol", "knows", "Dave"), ("Carol", "knows", "Erin"), ("Dave", "knows", "Frank"),
    ("Erin", "knows", "Frank"), ("Frank", "knows", "Grace"),
    ("Alice", "lives_in", "Paris"), ("Bob", "lives_in", "Paris"), ("Carol", "lives_in", "Berlin"),
    ("Dave", "lives_in", "Berlin"), ("Erin", "lives_in", "Rome"), ("Frank", "lives_in", "Rome"),
    ("Grace", "lives_in", "Paris"),
    ("Paris", "located_in", "France"), ("Berlin", "located_in", "Germany"), ("Rome", "located_in", "Italy"),
    ("France", "member_of", "EU"), ("Germany", "member_of", "EU"), ("Italy", "member_of", "EU"),
    ("France", "member_of", "NATO"), ("Germany", "member_of", "NATO"),
    ("Alice", "works_at", "Acme"), ("Dave", "works_at", "Acme"), ("Erin", "works_at", "Globex"),
    ("Frank", "works_at", "Globex"), ("Bob", "works_at", "Initech"),
    ("Acme", "based_in", "Paris"), ("Globex", "based_in", "Rome"), ("Initech", "based_in", "Berlin"),
    ("Paris", "population", "2148000"), ("Berlin", "population", "3645000"), ("Rome", "population", "2873000"),
    ("Acme", "founded", "1990-05-01"), ("Globex", "founded", "1985-11-20"), ("Initech", "founded", "2001-02-03"),
]
