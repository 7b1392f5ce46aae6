"""The hidden suites' library, one job per module (docs/pages/suites.md): `tensors` (inputs),
`calls` (the student's code and the reference), `value_checks`, `dtypes`, `grads`, `properties`,
`modules` (module questions), `causes` (likely causes), `compare` (quiet comparisons),
`counterexamples` (to the shrinking engine), `failing`, `memo`, `typed`, `trained`; the
`conftest.py` plugin parametrises the checks from the judge's cfg. A suite imports the modules
it uses; the settings reach a check only as its `cfg` fixture."""
