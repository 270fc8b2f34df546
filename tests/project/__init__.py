"""The project as a whole: the import rules between subpackages, the README's examples, the
catalog's conventions."""
