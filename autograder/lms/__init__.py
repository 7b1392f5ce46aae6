"""The LMS's own files, both ways: what Moodle and Canvas give the instructor and what they take back.

In: `layouts` reads who submitted what from the names Moodle's "Download all
submissions" and Canvas's "Download Submissions" give their files (a zip or
its unzipped folder), and tells such a class download from one student's
otter export zip. `grade` records each student's identity in results.json
(`extra_data.submitters`: name, plus `lms` and `lms_id`: the Moodle
participant id or the Canvas user id).

Back: `roster` reads the LMS's own roster (Moodle's offline grading
worksheet, Canvas's gradebook CSV) and matches the graded submissions to its
students; `writeback` fills it as each LMS imports it (Moodle: the worksheet
with its own headers, identifiers and number format, and the zip of feedback
files; Canvas: the gradebook CSV). `report OUT --roster FILE` runs them.

The rules each format follows are the LMS's own, read from its source (the
versions are named in docs/pages/instructors/lms.md).
"""
