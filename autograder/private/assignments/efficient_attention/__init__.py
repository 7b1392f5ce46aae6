"""The `efficient_attention` assignment's folder: its hidden suites (test_<question>.py), its words
(messages.yml, both languages) and its audit catalog (catalog/). Made by
`python -m autograder new`; docs/pages/adding.md says what to change next."""
