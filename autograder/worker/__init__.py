"""The worker side: the only code of the kit that runs in the untrusted
process beside the student's code (`runner`). It may import the standard
library, torch and `autograder.protocol`, nothing else of the kit (a test
walks its imports). Nothing here decides a verdict: it runs cells, calls
functions and sends back plain data."""
