"""The wire format both sides of the trust boundary share (`wire`): JSON
headers plus raw tensor bytes, never pickle. Imports the standard library
and torch only."""
