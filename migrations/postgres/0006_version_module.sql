-- What a version's module is and how it was compiled, in words, as its
-- check found it ("WASI 0.2 component, Python (componentize-py), 18.6 MB,
-- compiled in 7.9 s, runtime cache warm (97% ...)"); NULL before the check.
ALTER TABLE versions ADD COLUMN module TEXT;
