// spec 2.5 / 2.6: the project answers (lib/presenters/projects.ts).

export { networkBlockSchema, projectSchema, projectShape, streakSchema, type Project } from '../../../lib/presenters/projects';
