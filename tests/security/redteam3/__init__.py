"""Red team round 3: an independent helper's 719 attempts against the redactor (leaks of
planted secrets in realistic and crafted files, and over-redaction of benign serving
content), kept as a ratchet: ``known_open.txt`` lists the attempts that still fail, and any
other failure fails the suite. The corpus is the helper's, unedited but for its imports."""
